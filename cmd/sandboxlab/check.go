package main

import (
	"context"
	"io"
	"strings"

	"sandboxlab/checks"
	"sandboxlab/report"
	"sandboxlab/report/verdict"
)

func init() {
	register(command{name: "check", summary: "run the 26 promise checks against the sandbox", run: checkCmd})
}

func checkCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("check", "[--only id,...] "+formatUsage+" [--defect ID]",
		"Runs the promise checks (all 26, or those named) and prints each verdict with what the host saw.\n"+
			"With --format junit each check is a testcase, failed with its evidence. Progress (one line per\n"+
			"check) goes to stderr on a terminal. Exits 0 when every check passed, 2 when one failed, 1 on a\n"+
			"usage or internal error.\n"+
			"Checks: "+strings.Join(checks.IDs(), ", "), stderr)
	only := fs.String("only", "", "comma-separated check `ids` to run (default all)")
	out := outputFlags(fs, "check")
	defect := defectFlag(fs)
	if stop, err := parseFlags(fs, args); stop {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return usagef("%v", err)
	}
	if err := enableDefect(*defect); err != nil {
		return err
	}
	ids := splitList(*only)
	list, err := checks.Select(ids, nil)
	if err != nil {
		return usagef("--only: %v", err)
	}
	total := len(list)
	p := out.progress(stderr)
	done := 0
	rep, err := checks.RunAll(ctx, checks.Options{Only: ids, Progress: func(c report.Check) {
		done++
		p.line("%s %-20s %s (%d ms)", counter(done, total), c.ID, passFail(c.Passed), c.MS)
	}})
	if err != nil {
		return err
	}
	if err := out.write(stdout, rep); err != nil {
		return err
	}
	if rep.Failed > 0 {
		return exit(verdict.ExitEscape)
	}
	return nil
}

// passFail is a check's verdict in a progress line.
func passFail(passed bool) string {
	if passed {
		return "pass"
	}
	return "FAIL"
}
