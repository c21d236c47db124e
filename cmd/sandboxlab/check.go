package main

import (
	"context"
	"io"
	"strings"

	"sandboxlab/checks"
	"sandboxlab/report"
	"sandboxlab/verdict"
)

func init() {
	register(command{name: "check", summary: "run the promise checks (the course's 26, then the hardening suite's) against the sandbox", run: checkCmd})
}

func checkCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("check", "[--suite course|hardening|all] [--only id,...] "+formatUsage+" [--defect ID]",
		"Runs the promise checks (those of the suites chosen, or those named) and prints each verdict with\n"+
			"what the host saw: the course's 26 first, then the hardening suite's under a heading of its own.\n"+
			"With --format junit each check is a testcase, failed with its evidence (a test suite per suite:\n"+
			"check, check.hardening); --format html is one self-contained page. Progress (a bar, and a line per\n"+
			"check) goes to stderr on a terminal; --verbose prints the lines anyway. Exits 0 when\n"+
			"every check passed, 2 when one failed, 1 on a usage or internal error.\n"+
			"Checks: "+checkList(), stderr)
	suite := suiteFlag(fs)
	only := fs.String("only", "", "comma-separated check `ids` to run (default all of the suites)")
	out := outputFlags(fs, "check", report.HTML)
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
	suites, err := parseSuite(*suite)
	if err != nil {
		return err
	}
	if err := enableDefect(*defect); err != nil {
		return err
	}
	ids := splitList(*only)
	list, err := checks.Select(ids, suites)
	if err != nil {
		return usagef("--only: %v", err)
	}
	total := len(list)
	p := out.progress(stderr)
	p.start("check", total, nil, nil)
	done := 0
	rep, err := checks.RunAll(ctx, checks.Options{Only: ids, Suites: suites, Progress: func(c report.Check) {
		done++
		p.line("%s %-20s %s (%d ms)", counter(done, total), c.ID, passFail(c.Passed), c.MS)
		p.set(done, total)
	}})
	p.end()
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

// checkList lists the checks for --help, each suite's after the course's.
func checkList() string {
	var parts []string
	for _, s := range verdict.Suites {
		list, _ := checks.Select(nil, []verdict.Suite{s})
		if len(list) == 0 {
			continue
		}
		ids := make([]string, len(list))
		for i, c := range list {
			ids[i] = c.ID
		}
		parts = append(parts, strings.Join(ids, ", ")+" ("+string(s)+")")
	}
	return strings.Join(parts, "; ")
}

// passFail is a check's verdict in a progress line.
func passFail(passed bool) string {
	if passed {
		return "pass"
	}
	return "FAIL"
}
