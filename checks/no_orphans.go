package checks

import (
	"sandboxlab/sandbox"
)

var noOrphans = &Check{
	ID:      "no_orphans",
	Promise: "a detached daemon cannot outlive the call",
	Level:   3,
	Body: func(t *T) {
		tok := t.tagged()
		// Double fork and a new session: out of reach of any session sweep.
		t.runPython(Preset(3), sandbox.Command{}, `
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(30)
    os._exit(0)
os.wait()
`, tok)
		left := alive(tok)
		t.Check(left == 0, "the detached daemon is still running after the call (%d processes)", left)
		t.Evidence("the double-forked setsid daemon was gone when the call returned")
	},
}
