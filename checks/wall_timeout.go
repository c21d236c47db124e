package checks

import (
	"time"

	"sandboxlab/sandbox"
)

var wallTimeout = &Check{
	ID:      "wall_timeout",
	Promise: "a runaway loop is stopped at the wall-clock limit",
	Level:   1,
	Body: func(t *T) {
		// Without the CPU limit only the wall clock (or, if it is
		// broken, the 4 s watchdog) can stop the loop. It polls rather
		// than spins: the wall clock does not care, and the mutation run
		// spends its two cores better elsewhere.
		// The run is timed twice: from the call, which cannot be shorter
		// than the clock, and from the program's start, which leaves out
		// the set-up a loaded machine drags out.
		p := Preset(1, NoCPULimit)
		tok := t.tagged()
		started := t.programStart(tok)
		start := time.Now()
		t.runPython(p, sandbox.Command{Dir: t.ownedDir("app")}, "import time\nwhile True:\n    time.sleep(0.01)", tok)
		end := time.Now()
		took, ran := end.Sub(start), end.Sub(start)
		if at := started(); !at.IsZero() {
			// A start time is truncated to its tick: it may read a
			// little before the call.
			ran = min(took, end.Sub(at))
		}
		left := alive(tok)
		t.Check(left == 0, "the loop is still running after the run returned (%d processes)", left)
		limit := p.Limits.Wall
		t.Check(took >= limit, "stopped after %v, before the %v limit", took.Round(time.Millisecond), limit)
		t.Check(ran < limit+time.Second, "stopped only after %v (%v after the program started); the limit is %v",
			took.Round(time.Millisecond), ran.Round(time.Millisecond), limit)
		t.Evidence("stopped after %v (limit %v)", took.Round(time.Millisecond), limit)
	},
}
