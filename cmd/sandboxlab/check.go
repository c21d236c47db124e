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
	fs := newFlags("check", "[--only id,...] [--format text|markdown|json] [--defect ID]",
		"Runs the promise checks (all 26, or those named) and prints each verdict with what the host saw.\n"+
			"Exits 0 when every check passed, 2 when one failed, 1 on a usage or internal error.\n"+
			"Checks: "+strings.Join(checks.IDs(), ", "), stderr)
	only := fs.String("only", "", "comma-separated check `ids` to run (default all)")
	format := formatFlag(fs)
	defect := defectFlag(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	f, err := report.ParseFormat(*format)
	if err != nil {
		fmt.Fprintf(stderr, "sandboxlab check: --format: %v\n", err)
		return exitInternal
	}
	if !enableDefect(*defect, stderr) {
		return exitInternal
	}
	p := newProgress(stderr)
	rep, err := checks.RunAll(ctx, checks.Options{Only: splitList(*only), Progress: func(c report.Check) {
		p.line("%-20s %s (%d ms)", c.ID, map[bool]string{true: "pass", false: "FAIL"}[c.Passed], c.MS)
	}})
	if err != nil {
		fmt.Fprintf(stderr, "sandboxlab check: %v\n", err)
		return exitInternal
	}
	if err := report.Write(stdout, f, rep); err != nil {
		fmt.Fprintf(stderr, "sandboxlab check: %v\n", err)
		return exitInternal
	}
	if rep.Failed > 0 {
		return exitEscape
	}
	return exitOK
}
