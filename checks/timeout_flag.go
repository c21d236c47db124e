package checks

import (
	"sandboxlab/sandbox"
)

var timeoutFlag = &Check{
	ID:      "timeout_flag",
	Promise: "a stopped run says so (TimedOut), a finished one does not",
	Level:   1,
	Body: func(t *T) {
		s := t.session(Preset(1), 0)
		stopped := t.python(s, sandbox.Command{}, "import time\ntime.sleep(30)")
		finished := t.python(s, sandbox.Command{}, "print('done')")
		t.Check(stopped.TimedOut, "a run stopped after %v says timed_out=false (reason %s)", stopped.Wall, stopped.Reason)
		t.Check(!finished.TimedOut, "a run that finished says timed_out=true")
		t.Check(finished.Stdout == "done\n", "the finished run printed %q", finished.Stdout)
		t.Evidence("stopped run: timed_out=%v after %v; finished run: timed_out=%v", stopped.TimedOut, stopped.Wall.Round(1e6), finished.TimedOut)
	},
}
