package checks

import (
	"sync"
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
)

var processCap = &Check{
	ID:      "process_cap",
	Promise: "a fork bomb is stopped when it passes 16 processes",
	Level:   3,
	// The cap's own monitor, the namespace it counts in, the clocks that
	// would stop the bomb instead, and the kills that end its processes.
	Touches: []string{"wall_clock", "cpu_limit", "process_monitor", "pid_namespace", "tree_kill", "sweep"},
	Body: func(t *T) {
		p := Preset(3)
		tok := t.tagged()
		// The host counts the bomb's processes. The monitor acts within a
		// few milliseconds of the 17th, so only a count held for a while
		// means the cap did not hold.
		const held = 100 * time.Millisecond
		var mu sync.Mutex
		most, over := 0, time.Duration(0)
		var since time.Time
		w := evidence.Sample(tok, 5*time.Millisecond, func(now time.Time, procs []procfs.Proc) {
			// Those already killed (or whose namespace's init is) are on
			// their way out, however slowly a loaded machine lets them
			// leave /proc.
			n := len(procfs.Living(procs))
			mu.Lock()
			defer mu.Unlock()
			most = max(most, n)
			if n <= p.Processes.Max {
				since = time.Time{}
				return
			}
			if since.IsZero() {
				since = now
			}
			over = max(over, now.Sub(since))
		})
		res := t.runPython(p, sandbox.Command{}, forkBomb, tok)
		w.Stop()
		left := alive(tok)
		t.Check(res.Reason == sandbox.ReasonProcesses, "the run was not stopped for its processes: it ended with %s after %v", res.Reason, res.Wall.Round(time.Millisecond))
		t.Check(over < held, "more than %d processes were alive for %v", p.Processes.Max, over)
		t.Check(left == 0, "%d of the bomb's processes outlived the run", left)
		t.Evidence("stopped after %v; the host saw at most %d at once", res.Wall.Round(time.Millisecond), most)
	},
}
