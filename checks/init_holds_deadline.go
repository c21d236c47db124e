package checks

import (
	"time"

	"gotest.tools/v3/assert"

	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

var initHoldsDeadline = &Check{
	ID:      "init_holds_deadline",
	Suite:   verdict.Hardening,
	Promise: "at L6 the init ends a runaway at the run's deadline itself, without the supervisor's backstop",
	Level:   6,
	Body: func(t *T) {
		// The CPU limit is taken away, and the loop sleeps: only the clock
		// can stop it. A backstop stop is the supervisor's own act, 250 ms
		// past the deadline, so the host knows it was needed: the init had
		// not ended the run.
		p := Preset(6, NoCPULimit)
		tok := t.tagged()
		res := t.runPython(p, sandbox.Command{}, "import time\nwhile True:\n    time.sleep(0.01)", tok)
		assert.Check(t, res.Reason == sandbox.ReasonTimeout, "the run ended with reason %s, not at its time limit", res.Reason)
		assert.Check(t, res.StoppedBy == sandbox.StoppedByInit, "stopped by %q, not by the init at its deadline", res.StoppedBy)
		left := alive(tok)
		assert.Check(t, left == 0, "the loop is still running after the run returned (%d processes)", left)
		t.Evidence("reason %s, stopped by %s, the program's end seen %v after the %v deadline",
			res.Reason, res.StoppedBy, res.KillLate.Round(time.Millisecond), p.Limits.Wall)
	},
}
