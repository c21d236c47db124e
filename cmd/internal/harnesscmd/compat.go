package harnesscmd

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"sandboxlab/cmd/internal/cli"
	"sandboxlab/compat"
	"sandboxlab/verdict"
)

func compatHelp() string {
	return "Runs the compatibility suite: ordinary work an agent's program does, each workload checking its\n" +
		"own results, through the sandbox at each level asked for (default L5 and L6), and prints a table\n" +
		"of workload against level. A workload passes when the run ended by itself with status 0 and its\n" +
		"program printed ok last; one whose program is not installed here (gcc, bash, curl, ...) is\n" +
		"skipped, by name. The levels' limits hold but for the wall clock, raised to " + compat.WallClock.String() + ": the\n" +
		"question is whether the isolation breaks the work, not whether a busy machine does it in 1.5 s.\n" +
		"The network workloads reach loopback servers the suite starts, through the egress proxy\n" +
		"(level 4 and up). Exits 0 when nothing failed, 2 when a workload failed, 1 on a usage or\n" +
		"internal error.\n" +
		"Workloads: " + strings.Join(compat.Names(), ", ")
}

// compatOptions are compat's flags.
type compatOptions struct {
	output
	levels levelList
	only   string
}

// levelList is --level, which may be given more than once.
type levelList []int

func (l *levelList) String() string { return fmt.Sprint([]int(*l)) }

func (l *levelList) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("want a level number, got %q", s)
	}
	*l = append(*l, n)
	return nil
}

func (o *compatOptions) SetFlags(fs *flag.FlagSet) {
	fs.Var(&o.levels, "level", "run at level `N` (repeatable; default 5 and 6)")
	fs.StringVar(&o.only, "only", "", "run only the workloads `NAME,...`")
	o.output.setFlags(fs, "compat", &compat.Report{}, true)
}

func (o *compatOptions) Validate(cl cli.Line) error {
	opts := compat.Options{Levels: o.levels, Only: splitList(o.only)}
	return cli.FirstError(cl.NoArgs(), o.output.validate(), opts.Validate())
}

func compatCmd(ctx context.Context, o *compatOptions, stdout, stderr io.Writer) error {
	opts := compat.Options{Levels: o.levels, Only: splitList(o.only)}
	total := opts.Runs()
	p := o.progress(stderr)
	p.start("compat", total, nil, nil)
	done := 0
	opts.Progress = func(r compat.Result) {
		done++
		verdict := passFail(r.Passed)
		if r.Skipped != "" {
			verdict = "skipped"
		}
		p.line("%s L%d %-18s %s (%d ms)", counter(done, total), r.Level, r.Workload, verdict, r.MS)
		p.set(done, total)
	}
	rep, err := compat.Run(ctx, opts)
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
