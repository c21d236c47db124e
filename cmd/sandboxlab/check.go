package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"sandboxlab/checks"
	"sandboxlab/report"
)

func init() {
	register(command{name: "check", summary: "run the 26 promise checks against the sandbox", run: checkCmd})
}

func checkCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("check", "[--only id,...] "+formatUsage+" [--defect ID]",
		"Runs the promise checks (all 26, or those named) and prints each verdict with what the host saw.\n"+
			"With --format junit each check is a testcase, failed with its evidence. Progress (one line per\n"+
			"check) goes to stderr on a terminal. Exits 0 when every check passed, 2 when one failed, 1 on a\n"+
			"usage or internal error.\n"+
			"Checks: "+strings.Join(checks.IDs(), ", "), stderr)
	only := fs.String("only", "", "comma-separated check `ids` to run (default all)")
	out := outputFlags(fs, "check")
	defect := defectFlag(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "sandboxlab check: unexpected argument %q (sandboxlab check --help)\n", fs.Arg(0))
		return exitInternal
	}
	if err := out.check(); err != nil {
		fmt.Fprintf(stderr, "sandboxlab check: %v\n", err)
		return exitInternal
	}
	if !enableDefect(*defect, stderr) {
		return exitInternal
	}
	ids := splitList(*only)
	list, err := checks.Select(ids)
	if err != nil {
		fmt.Fprintf(stderr, "sandboxlab check: --only: %v\n", err)
		return exitInternal
	}
	total := len(list)
	p := out.progress(stderr)
	done := 0
	rep, err := checks.RunAll(ctx, checks.Options{Only: ids, Progress: func(c report.Check) {
		done++
		p.line("%s %-20s %s (%d ms)", counter(done, total), c.ID, map[bool]string{true: "pass", false: "FAIL"}[c.Passed], c.MS)
	}})
	if err != nil {
		fmt.Fprintf(stderr, "sandboxlab check: %v\n", err)
		return exitInternal
	}
	if err := out.write(stdout, rep); err != nil {
		fmt.Fprintf(stderr, "sandboxlab check: %v\n", err)
		return exitInternal
	}
	if rep.Failed > 0 {
		return exitEscape
	}
	return exitOK
}
