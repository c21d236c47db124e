package checks

import (
	"sandboxlab/sandbox"
)

var sweepLeftovers = &Check{
	ID:      "sweep_leftovers",
	Promise: "a child left running after a normal end is killed",
	Level:   1,
	Body: func(t *T) {
		tok := t.tagged()
		res := t.runPython(Preset(1), sandbox.Command{Dir: t.ownedDir("app")}, `
import os, time
if os.fork() == 0:
    time.sleep(30)
    os._exit(0)
print("parent done")
`, tok)
		t.Check(res.Reason == sandbox.ReasonExited && res.ExitCode == 0, "the program did not end normally: %s", res.Reason)
		left := alive(tok)
		t.Check(left == 0, "%d child still running after the run ended", left)
		t.Evidence("the sleeping child was gone when the run returned")
	},
}
