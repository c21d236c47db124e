package checks

import (
	"fmt"
	"strings"
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

// deadlineTries is how many runaways init_holds_deadline runs at most: a
// correct init that a loaded machine schedules more than the backstop's
// grace late loses one run to the backstop, rarely three in a row; an
// init without the deadline loses every one.
const deadlineTries = 3

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
		var tries []string
		for range deadlineTries {
			tok := t.tagged()
			res := t.runPython(p, sandbox.Command{}, "import time\nwhile True:\n    time.sleep(0.01)", tok)
			left := alive(tok)
			t.Check(left == 0, "the loop is still running after the run returned (%d processes)", left)
			t.Assert(res.Reason == sandbox.ReasonTimeout, "the run ended with reason %s, not at its time limit", res.Reason)
			tries = append(tries, fmt.Sprintf("stopped by %s, the program's end seen %v after the %v deadline",
				res.StoppedBy, res.KillLate.Round(time.Millisecond), p.Limits.Wall))
			if res.StoppedBy == sandbox.StoppedByInit {
				t.Evidence("%s", strings.Join(tries, "; then "))
				return
			}
		}
		t.Logf("no run of %d was stopped by the init at its deadline: %s", deadlineTries, strings.Join(tries, "; "))
		t.Fail()
	},
}
