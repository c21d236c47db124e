package attacks

import (
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/procfs"
)

var runawayLoopSpec = &spec{
	id:            "runaway_loop",
	escapes:       "still running past the wall limit",
	firstStop:     1,
	new:           func() attack { return &runawayLoop{} },
	runsToLimit:   true,
	escapeByClock: true,
	elsewhere:     elsewhere{harmlessAsRoot: true, keepsRunning: true},
	idleCPU:       true,
	// A loop that never ends is stopped by a clock or the CPU limit; its
	// processes must all be gone, killed as a tree or swept, from a PID
	// namespace or the init's.
	touches: []string{"wall_clock", "cpu_limit", "tree_kill", "sweep", "pid_namespace", "reaper"},
}

// runawayCheck is when the host starts looking for the loop, counted from
// when it first saw the program run (starting a sandbox can take a few
// hundred milliseconds on a loaded machine, and the wall clock counts from
// there): the 1.5 s wall limit and a grace for the kill to be sent. From
// then on, a loop that is alive and has no SIGKILL pending was not stopped
// at the limit. (A loop killed on time but slow to exit has its SIGKILL
// pending; one that the 2 s CPU limit stops later was still running past
// the wall limit, and is seen before it dies.)
const runawayCheck = 1800 * time.Millisecond

type runawayLoop struct {
	seen         time.Time     // when the program was first seen running
	checked      bool          // seen running unkilled past the wall limit
	aliveAtCheck []procfs.Proc // those processes
}

func (r *runawayLoop) watch(_ *env, now time.Time, procs []procfs.Proc) bool {
	if r.seen.IsZero() {
		if len(procs) > 0 {
			r.seen = now
			// Whether it is killed at the wall limit does not depend on
			// how much CPU it got by then (see spec.idleCPU).
			idle(procs)
		}
		return false
	}
	if r.checked || now.Sub(r.seen) < runawayCheck {
		return false
	}
	r.aliveAtCheck = procfs.Living(procs)
	r.checked = len(r.aliveAtCheck) > 0
	// Running unkilled: escaped. Ending it now also spares L0 the 4 s watchdog.
	return r.checked
}

func (r *runawayLoop) judge(e *env) verdict {
	res := e.res
	switch {
	case len(r.aliveAtCheck) > 0:
		return escaped("pid %s still running, not killed, %d ms after it started", pids(r.aliveAtCheck), runawayCheck.Milliseconds())
	case len(e.aliveAfter) > 0:
		return escaped("pid %s still running after the run ended (%d ms)", pids(e.aliveAfter), res.Wall.Milliseconds())
	case res.Reason == sandbox.ReasonTimeout:
		return stopped("wall clock", "timed out after %d ms, nothing left running", res.Wall.Milliseconds())
	case res.Reason == sandbox.ReasonCPU:
		return stopped("CPU limit", "stopped after %d ms wall, %d ms CPU", res.Wall.Milliseconds(), res.CPU.Milliseconds())
	}
	return stopped("unexpected: "+ended(res), "ended after %d ms, nothing left running", res.Wall.Milliseconds())
}
