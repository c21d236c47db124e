package checks

import (
	"fmt"
	"strings"

	"sandboxlab/sandbox"
)

var exitStatus = &Check{
	ID:      "exit_status",
	Promise: "the program's exit status is reported faithfully",
	Level:   0,
	Body: func(t *T) {
		s := t.session(Preset(0), 0)
		var seen []string
		for _, want := range []int{0, 3, 77} {
			res := t.python(s, sandbox.Command{Dir: t.ownedDir("app")}, "import sys\nsys.exit(int(sys.argv[1]))", fmt.Sprint(want))
			t.Check(res.ExitCode == want && res.Signal == "", "exit(%d) is reported as status %d signal %q", want, res.ExitCode, res.Signal)
			seen = append(seen, fmt.Sprint(res.ExitCode))
		}
		res := t.python(s, sandbox.Command{Dir: t.ownedDir("app")}, "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)")
		t.Check(res.Signal == "SIGTERM" && res.ExitCode == -1 && res.Reason == sandbox.ReasonSignal,
			"a SIGTERM death is reported as status %d signal %q reason %s", res.ExitCode, res.Signal, res.Reason)
		seen = append(seen, res.Signal)
		t.Evidence("exit(0), exit(3), exit(77) and SIGTERM reported as %s", strings.Join(seen, ", "))
	},
}
