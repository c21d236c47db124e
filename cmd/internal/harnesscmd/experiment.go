package harnesscmd

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"sandboxlab/checks/experiments"
	"sandboxlab/cmd/internal/cli"
	"sandboxlab/report"
)

func experimentHelp() string {
	return "cpu-quirk     a busy loop under a 2 s CPU limit: no namespace, as PID 1, and as PID 1 with the soft limit only\n" +
		"nproc         RLIMIT_NPROC=5 as root in a user namespace with a 0→0 map (deliberately), then the monitor\n" +
		"layer-hiding  the tree-kill check with a leader-only timeout, with the CPU limit on and off\n\n" +
		"Each prints the figures it measured; with --format junit each measured case is a testcase.\n" +
		"A line per experiment measured goes to stderr on a terminal; --verbose prints it anyway.\n" +
		"Exits 0 when the experiment ran, 1 otherwise."
}

// experimentOptions are experiment's flags and the experiment named.
type experimentOptions struct {
	output
	list []*experiments.Experiment // the experiments named, validated
}

func (o *experimentOptions) SetFlags(fs *flag.FlagSet) {
	o.output.setFlags(fs, "experiment", report.Experiments{}, true)
}

func (o *experimentOptions) Validate(cl cli.Line) error {
	if len(cl.Args) > 1 {
		return fmt.Errorf("unexpected arguments %q", cl.Args[1:])
	}
	if err := o.output.validate(); err != nil {
		return err
	}
	name := ""
	if len(cl.Args) == 1 {
		name = cl.Args[0]
	}
	switch e := experiments.Lookup(name); {
	case name == "all":
		o.list = experiments.All
	case e != nil:
		o.list = []*experiments.Experiment{e}
	default:
		return fmt.Errorf("want cpu-quirk, nproc, layer-hiding or all, got %q", name)
	}
	return nil
}

func experimentCmd(ctx context.Context, o *experimentOptions, stdout, stderr io.Writer) error {
	p := o.progress(stderr)
	var reps report.Experiments
	for i, e := range o.list {
		start := time.Now()
		r, err := e.Run(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", e.ID, err)
		}
		p.line("%s %-13s measured in %s", counter(i+1, len(o.list)), e.ID, roundDuration(time.Since(start)))
		reps = append(reps, r)
	}
	var rep report.Report = reps
	if len(reps) == 1 {
		rep = reps[0]
	}
	return o.write(stdout, rep)
}
