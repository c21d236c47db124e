package attacks

import (
	"time"

	"sandboxlab/sandbox"
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

// runawayCheck is when the host looks for the loop: past the 1.5 s wall
// limit, before the 2 s CPU limit can have fired.
const runawayCheck = 1900 * time.Millisecond

func watchRunawayLoop(t *trial, elapsed time.Duration) bool {
	if t.checked || elapsed < runawayCheck {
		return false
	}
	t.checked = true
	t.aliveAtCheck = t.attackProcs()
	// Still running: escaped. Ending it now also spares L0 the 4 s watchdog.
	return len(t.aliveAtCheck) > 0
}

func judgeRunawayLoop(t *trial) verdict {
	r := t.res
	switch {
	case len(t.aliveAtCheck) > 0:
		return escaped("pid %s still running %d ms after the start", pids(t.aliveAtCheck), runawayCheck.Milliseconds())
	case len(t.aliveAfter) > 0:
		return escaped("pid %s still running after the run ended (%d ms)", pids(t.aliveAfter), r.Wall.Milliseconds())
	case r.Reason == sandbox.ReasonTimeout:
		return stopped("wall clock", "timed out after %d ms, nothing left running", r.Wall.Milliseconds())
	case r.Reason == sandbox.ReasonCPU:
		return stopped("CPU limit", "stopped after %d ms wall, %d ms CPU", r.Wall.Milliseconds(), r.CPU.Milliseconds())
	}
	return stopped("unexpected: "+ended(r), "ended after %d ms, nothing left running", r.Wall.Milliseconds())
}
