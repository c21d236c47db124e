package attacks

import (
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/procfs"
)

func init() {
	register(attack{
		id:        "runaway_loop",
		escapes:   "still running past the wall limit",
		firstStop: 1,
		watch:     watchRunawayLoop,
		judge:     judgeRunawayLoop,
	})
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

func watchRunawayLoop(t *trial, now time.Time, procs []procfs.Proc) bool {
	if t.seen.IsZero() {
		if len(procs) > 0 {
			t.seen = now
		}
		return false
	}
	if t.checked || now.Sub(t.seen) < runawayCheck {
		return false
	}
	for _, p := range procs {
		if !procfs.Killed(p.PID) {
			t.aliveAtCheck = append(t.aliveAtCheck, p)
		}
	}
	t.checked = len(t.aliveAtCheck) > 0
	// Running unkilled: escaped. Ending it now also spares L0 the 4 s watchdog.
	return t.checked
}

func judgeRunawayLoop(t *trial) verdict {
	r := t.res
	switch {
	case len(t.aliveAtCheck) > 0:
		return escaped("pid %s still running, not killed, %d ms after it started", pids(t.aliveAtCheck), runawayCheck.Milliseconds())
	case len(t.aliveAfter) > 0:
		return escaped("pid %s still running after the run ended (%d ms)", pids(t.aliveAfter), r.Wall.Milliseconds())
	case r.Reason == sandbox.ReasonTimeout:
		return stopped("wall clock", "timed out after %d ms, nothing left running", r.Wall.Milliseconds())
	case r.Reason == sandbox.ReasonCPU:
		return stopped("CPU limit", "stopped after %d ms wall, %d ms CPU", r.Wall.Milliseconds(), r.CPU.Milliseconds())
	}
	return stopped("unexpected: "+ended(r), "ended after %d ms, nothing left running", r.Wall.Milliseconds())
}
