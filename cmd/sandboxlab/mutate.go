package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"time"

	"sandboxlab"
	"sandboxlab/attacks"
	"sandboxlab/checks"
	"sandboxlab/mutants"
	"sandboxlab/report"
	"sandboxlab/sandbox"
)

func init() {
	register(command{name: "mutate", summary: "switch on each planted defect in turn and diff what fails against predictions.yaml", run: mutateCmd})
	register(command{name: "mutant", summary: "run the checks and the attack matrix with one defect on (the mutate worker)", run: mutantCmd, hidden: true})
}

func mutateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("mutate", "[--predictions FILE] [--only id,...] [-j N] [--fail-on escape|any|never] [--format text|markdown|json]",
		"Runs the correct sandbox first (the baseline: every check must pass and the attack matrix must match\n"+
			"the predictions' baseline), then each planted defect in a process of its own: the 26 checks and the\n"+
			"16x6 attack matrix, diffed against the predictions. Outcomes: exact, too_wide, extra, different,\n"+
			"escaped (no check failed), hung. Exit codes: 0 the gate holds; 2 an unexpected escape (a defect no\n"+
			"check caught, or an attack cell that got through, neither predicted nor known; a defect that hung\n"+
			"counts as one); 3 another divergence (only with --fail-on any); 4 the baseline is broken; 1 usage\n"+
			"or internal error.", stderr)
	predFile := fs.String("predictions", "", "predictions `FILE` (default: the predictions.yaml built into the binary)")
	only := fs.String("only", "", "comma-separated defect `ids` to run (default all)")
	jobs := fs.Int("j", runtime.NumCPU(), "defects run at once (`N`); each runs its checks and attacks one after another")
	failOn := fs.String("fail-on", mutants.FailOnEscape, "what fails the gate: `escape` (an unexpected escape), any (any divergence), never")
	timeout := fs.Duration("timeout", 6*time.Minute, "bound on one defect's run; past it the defect is reported as hung")
	format := formatFlag(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	fail := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "sandboxlab mutate: "+format+"\n", args...)
		return exitInternal
	}
	if fs.NArg() > 0 {
		return fail("unexpected arguments %q", fs.Args())
	}
	f, err := report.ParseFormat(*format)
	if err != nil {
		return fail("--format: %v", err)
	}
	switch *failOn {
	case mutants.FailOnEscape, mutants.FailOnAny, mutants.FailOnNever:
	default:
		return fail("--fail-on: want escape, any or never, got %q", *failOn)
	}
	if *jobs < 1 {
		return fail("-j: want at least 1, got %d", *jobs)
	}
	if !mutants.Compiled {
		return fail("%v", mutants.ErrNotCompiled)
	}
	data, name := sandboxlab.Predictions, "the built-in predictions.yaml"
	if *predFile != "" {
		if data, err = os.ReadFile(*predFile); err != nil {
			return fail("%v", err)
		}
		name = *predFile
	}
	preds, err := mutants.ParsePredictions(data, mutants.Universe{Checks: checks.IDs(), Attacks: attacks.IDs(), Levels: sandbox.Levels})
	if err != nil {
		return fail("%s: %v", name, err)
	}
	exe, err := os.Executable()
	if err != nil {
		return fail("finding this binary: %v", err)
	}
	p := newProgress(stderr)
	r := &mutants.Runner{
		Worker: func(ctx context.Context, defect string) *exec.Cmd {
			return exec.CommandContext(ctx, exe, "mutant", "--defect", defect)
		},
		Predictions: preds,
		Only:        splitList(*only),
		Jobs:        *jobs,
		Timeout:     *timeout,
		FailOn:      *failOn,
		Identity:    identity(),
		Progress: func(pr mutants.Progress) {
			if pr.Defect.ID == "" {
				p.line("baseline done in %s; %d defects to run", pr.Elapsed.Round(time.Second), pr.Total)
				return
			}
			eta := time.Duration(float64(pr.Elapsed) / float64(pr.Done) * float64(pr.Total-pr.Done))
			p.line("[%d/%d] %-18s %-9s %3d s   elapsed %s, about %s left", pr.Done, pr.Total, pr.Defect.ID, pr.Defect.Outcome,
				pr.Defect.MS/1000, pr.Elapsed.Round(time.Second), eta.Round(time.Second))
		},
	}
	m, err := r.Run(ctx)
	if err != nil {
		return fail("%v", err)
	}
	if err := report.Write(stdout, f, m); err != nil {
		return fail("%v", err)
	}
	return mutants.ExitCode(m)
}

// identity says who runs the harness, for every report.
func identity() report.Identity {
	return report.Identity{UID: os.Geteuid(), Root: sandbox.HostRoot(), ProgramUID: sandbox.HostIdentity().UID}
}

// mutantCmd is the worker of 'mutate': the checks, then the attack
// matrix, with one defect on, as one JSON object.
func mutantCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("mutant", "[--defect ID]", "The worker 'mutate' runs for each defect; prints a JSON object {checks, attacks}.", stderr)
	defect := defectFlag(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if !enableDefect(*defect, stderr) {
		return exitInternal
	}
	var res mutants.WorkerResult
	var err error
	if res.Checks, err = checks.RunAll(ctx, checks.Options{}); err != nil {
		fmt.Fprintf(stderr, "sandboxlab mutant: checks: %v\n", err)
		return exitInternal
	}
	if res.Attacks, err = attacks.Run(ctx, attacks.Options{}); err != nil {
		fmt.Fprintf(stderr, "sandboxlab mutant: attacks: %v\n", err)
		return exitInternal
	}
	if err := json.NewEncoder(stdout).Encode(res); err != nil {
		fmt.Fprintf(stderr, "sandboxlab mutant: %v\n", err)
		return exitInternal
	}
	return exitOK
}
