package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"sandboxlab/checks/experiments"
	"sandboxlab/report"
)

func init() {
	register(command{name: "experiment", summary: "measure the course notes' experiments: cpu-quirk, nproc, layer-hiding", run: experimentCmd})
}

func experimentCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("experiment", "cpu-quirk|nproc|layer-hiding|all "+formatUsage,
		"cpu-quirk     a busy loop under a 2 s CPU limit: no namespace, as PID 1, and as PID 1 with the soft limit only\n"+
			"nproc         RLIMIT_NPROC=5 as root in a user namespace with a 0→0 map (deliberately), then the monitor\n"+
			"layer-hiding  the tree-kill check with a leader-only timeout, with the CPU limit on and off\n\n"+
			"Each prints the figures it measured; with --format junit each measured case is a testcase.\n"+
			"Exits 0 when the experiment ran, 1 otherwise.", stderr)
	out := outputFlags(fs, "experiment")
	name := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:] // flags may follow the name
	}
	if stop, err := parseFlags(fs, args); stop {
		return err
	}
	if name == "" && fs.NArg() == 1 {
		name = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	if err := out.check(); err != nil {
		return usagef("%v", err)
	}
	var list []*experiments.Experiment
	switch e := experiments.Lookup(name); {
	case name == "all":
		list = experiments.All
	case e != nil:
		list = []*experiments.Experiment{e}
	default:
		return usagef("want cpu-quirk, nproc, layer-hiding or all, got %q", name)
	}
	p := out.progress(stderr)
	var reps report.Experiments
	for i, e := range list {
		start := time.Now()
		r, err := e.Run(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", e.ID, err)
		}
		p.line("%s %-13s measured in %s", counter(i+1, len(list)), e.ID, roundDuration(time.Since(start)))
		reps = append(reps, r)
	}
	var rep report.Report = reps
	if len(reps) == 1 {
		rep = reps[0]
	}
	return out.write(stdout, rep)
}
