package harness

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"sandboxlab/attacks"
	"sandboxlab/attacks/backends"
	"sandboxlab/sandbox/reexec"
	"sandboxlab/verdict"
)

// flagWorkerName is the helper the flag runner starts for each run of a
// profile's column: this binary again, running the attacks under one
// profile (the unmutated one, or a mutant) and printing the matrix.
const flagWorkerName = "sandboxlab-flag-mutant"

func init() { reexec.Register(flagWorkerName, flagWorkerMain) }

// FlagTask is one run of a profile's column: the attacks Only (every
// attack of Suites when empty) under Profile.
type FlagTask struct {
	// Mutant is the mutant's id ("" for the unmutated profile).
	Mutant  string           `json:"mutant,omitempty"`
	Spec    string           `json:"spec"`
	Profile backends.Profile `json:"profile"`
	Only    []string         `json:"only,omitempty"`
	Suites  []verdict.Suite  `json:"suites,omitempty"`
	// Repeat is which run of the task this is (0 for the first).
	Repeat int `json:"repeat"`
}

// FlagWorkerCommand is the FlagRunner's Worker for the real attacks:
// this binary again, as the flag worker helper, for task t. The binary
// must call reexec.Init first thing in main (or TestMain).
func FlagWorkerCommand(ctx context.Context, t FlagTask) *exec.Cmd {
	b, err := json.Marshal(t)
	if err != nil { // a Profile always marshals
		panic(err)
	}
	return reexec.CommandContext(ctx, flagWorkerName, "--task", string(b))
}

// flagWorkerMain runs the column its --task names and prints the
// report.Sandboxes in JSON.
func flagWorkerMain(args []string) int {
	fs := flag.NewFlagSet(flagWorkerName, flag.ContinueOnError)
	task := fs.String("task", "", "the FlagTask, in JSON")
	if err := fs.Parse(args); err != nil {
		return verdict.ExitInternal
	}
	var t FlagTask
	if err := json.Unmarshal([]byte(*task), &t); err != nil {
		fmt.Fprintf(os.Stderr, "%s: reading the task: %v\n", flagWorkerName, err)
		return verdict.ExitInternal
	}
	// The runner asks a worker to stop with SIGTERM; the column then
	// cleans up after the cell under way.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := attacks.RunSandboxes(ctx, attacks.SandboxOptions{
		Sandboxes: []backends.Sandbox{{Spec: t.Spec, Level: -1, Profile: &t.Profile}},
		Only:      t.Only, Suites: t.Suites})
	if err == nil {
		err = json.NewEncoder(os.Stdout).Encode(rep)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %s: %v\n", flagWorkerName, t.Mutant, err)
		return verdict.ExitInternal
	}
	return verdict.ExitOK
}
