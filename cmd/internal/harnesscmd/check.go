package harnesscmd

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"sandboxlab/checks"
	"sandboxlab/cmd/internal/cli"
	"sandboxlab/report"
	"sandboxlab/verdict"
)

func checkHelp() string {
	return "Runs the promise checks (those of the suites chosen, or those named) and prints each verdict with\n" +
		"what the host saw: the course's 26 first, then the hardening suite's under a heading of its own.\n" +
		"With --format junit each check is a testcase, failed with its evidence (a test suite per suite:\n" +
		"check, check.hardening); --format html is one self-contained page. Progress (a bar, and a line per\n" +
		"check) goes to stderr on a terminal; --verbose prints the lines anyway. Exits 0 when\n" +
		"every check passed, 2 when one failed, 1 on a usage or internal error.\n" +
		"Checks: " + checkList()
}

// checkOptions are check's flags.
type checkOptions struct {
	selection
	output
	cli.DefectFlag
	list []*checks.Check // the checks to run, validated
}

func (o *checkOptions) SetFlags(fs *flag.FlagSet) {
	o.selection.setFlags(fs, "run only the checks `ID,...` (default: all of the suites)")
	o.output.setFlags(fs, "check", &report.Checks{}, true)
	o.DefectFlag.AddFlag(fs)
}

func (o *checkOptions) Validate(cl cli.Line) error {
	if err := cli.FirstError(cl.NoArgs(), o.output.validate(), o.selection.validate(), o.DefectFlag.Check()); err != nil {
		return err
	}
	list, err := checks.Select(o.ids(), o.suites)
	if err != nil {
		return fmt.Errorf("--only: %w", err)
	}
	o.list = list
	return nil
}

func checkCmd(ctx context.Context, o *checkOptions, stdout, stderr io.Writer) error {
	if err := o.Enable(); err != nil {
		return err
	}
	total := len(o.list)
	p := o.progress(stderr)
	p.start("check", total, nil, nil)
	done := 0
	rep, err := checks.RunAll(ctx, checks.Options{Only: o.ids(), Suites: o.suites, Progress: func(c report.Check) {
		done++
		p.line("%s %-20s %s (%d ms)", counter(done, total), c.ID, passFail(c.Passed), c.MS)
		p.set(done, total)
	}})
	p.end()
	if err != nil {
		return err
	}
	if err := o.write(stdout, rep); err != nil {
		return err
	}
	if rep.Failed > 0 {
		return cli.Exit(verdict.ExitEscape)
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
