package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"sandboxlab/attacks"
	"sandboxlab/checks"
	"sandboxlab/mutants"
	"sandboxlab/mutants/harness"
	"sandboxlab/report/verdict"
	"sandboxlab/sandbox/reexec"
)

// workerName is the helper 'mutate' starts for each defect (and the
// baseline): this binary with one defect on, running the checks and the
// attack matrix of the suites it is given (a defect's own suite; every
// suite of the run for the baseline).
const workerName = "sandboxlab-mutant"

func init() { reexec.Register(workerName, workerMain) }

// workerMain prints the checks and the attack matrix of the suites its
// --suite names, with the defect its --defect names switched on, as one
// harness.WorkerResult in JSON.
func workerMain(args []string) int {
	fs := flag.NewFlagSet(workerName, flag.ContinueOnError)
	defect := fs.String("defect", "", "the planted defect to switch on")
	suiteList := fs.String("suite", verdict.AllSuites, "the suites whose checks and attacks run")
	if err := fs.Parse(args); err != nil {
		return verdict.ExitInternal
	}
	suites, err := verdict.ParseSuites(*suiteList)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: --suite: %v\n", workerName, err)
		return verdict.ExitInternal
	}
	if err := mutants.Enable(*defect); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", workerName, err)
		return verdict.ExitInternal
	}
	// The runner asks a worker to stop with SIGTERM; it then cleans up
	// after the check or cell under way.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var res harness.WorkerResult
	if res.Checks, err = checks.RunAll(ctx, checks.Options{Suites: suites}); err != nil {
		fmt.Fprintf(os.Stderr, "%s: checks: %v\n", workerName, err)
		return verdict.ExitInternal
	}
	if res.Attacks, err = attacks.Run(ctx, attacks.Options{Suites: suites}); err != nil {
		fmt.Fprintf(os.Stderr, "%s: attacks: %v\n", workerName, err)
		return verdict.ExitInternal
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", workerName, err)
		return verdict.ExitInternal
	}
	return verdict.ExitOK
}
