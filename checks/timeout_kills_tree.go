package checks

import (
	"context"
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/procfs"
)

var timeoutKillsTree = &Check{
	ID:      "timeout_kills_tree",
	Promise: "the timeout kill reaches the process, its children and its session",
	Level:   1,
	Body: func(t *T) {
		// Busy-looping children would also be killed by the CPU limit a
		// few seconds later, hiding a timeout that kills only the leader:
		// take it away (see the layer-hiding experiment).
		left := treeSurvivors(t, Preset(1, NoCPULimit))
		t.Check(left == 0, "%d of the run's processes still alive %v after the timeout", left, TreeGrace)
		t.Evidence("all processes gone after the timeout (one child in its own process group, one grandchild)")
	},
}

// TreeGrace is how long the tree kill may take to be seen done.
const TreeGrace = 5 * time.Second

// treeProgram busy-loops in two processes below the leader: a child that
// moves to its own process group (same session) and a grandchild whose
// parent has exited. The leader waits (its CPU is no part of the story).
const treeProgram = `
import os, time
if os.fork() == 0:
    os.setpgid(0, 0)
    while True: pass
if os.fork() == 0:
    if os.fork() == 0:
        while True: pass
    os._exit(0)
while True:
    time.sleep(0.01)
`

// treeSurvivors runs treeProgram into the wall clock under p and returns
// how many of its processes are still alive TreeGrace later, or, when p
// has a hard CPU limit, once every survivor has had that much CPU time
// (at most a minute more).
func treeSurvivors(t *T, p sandbox.Policy) int {
	t.Helper()
	tok := t.tagged()
	res := t.runPython(p, sandbox.Command{Dir: t.ownedDir("app")}, treeProgram, tok)
	t.Check(res.Reason == sandbox.ReasonTimeout, "the run ended with %s, not the timeout", res.Reason)
	// Not poll.WaitOn: the layer-hiding experiment wants the count of
	// survivors, not a failure.
	deadline := time.Now().Add(TreeGrace)
	hard := p.Limits.CPUHard
	for {
		procs := procfs.WithArg(tok)
		if len(procs) == 0 {
			return 0
		}
		if time.Now().After(deadline) && !owedCPU(procs, hard, deadline) {
			return len(procs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// cpuWaitCap bounds how long the count waits past TreeGrace for a CPU
// limit to have had its chance.
const cpuWaitCap = time.Minute

// owedCPU reports whether a survivor has yet to use the hard CPU limit's
// time (hard > 0), within cpuWaitCap past the deadline: on a busy machine
// a busy loop gets a fraction of a core, and counting it before the limit
// could reach it would measure the machine, not the layer.
func owedCPU(procs []procfs.Proc, hard time.Duration, deadline time.Time) bool {
	if hard <= 0 || time.Now().After(deadline.Add(cpuWaitCap)) {
		return false
	}
	for _, p := range procs {
		if p.Alive() && p.CPU < hard {
			return true
		}
	}
	return false
}

// TreeSurvivors runs the tree-kill check's measurement under p outside
// any check: how many of treeProgram's processes are alive TreeGrace
// after the timeout. failure is the first thing that went wrong with the
// run itself ("" if none). The layer-hiding experiment calls it with a
// defect on, in a process of its own.
func TreeSurvivors(ctx context.Context, p sandbox.Policy) (survivors int, failure string, err error) {
	failure, err = withT(ctx, func(t *T) { survivors = treeSurvivors(t, p) })
	return survivors, failure, err
}
