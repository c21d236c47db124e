package checks

import (
	"errors"
	"io/fs"
	"os"
	"strings"

	"sandboxlab/sandbox"
)

var sessionCleanup = &Check{
	ID:      "session_cleanup",
	Promise: "the session's directory is gone after Close",
	Level:   2,
	Body: func(t *T) {
		s := t.session(Preset(2), 0)
		// Every directory the session had, asked after each run.
		dirs := map[string]bool{s.Dir(): true}
		for _, src := range []string{`
import os
os.makedirs("a/b")
open("a/b/f", "w").write("x")
os.chmod("a/b", 0)
os.mkfifo("pipe")
`, "open('second', 'w').write('x')"} {
			res := t.python(s, sandbox.Command{}, src)
			t.Check(res.ExitCode == 0, "a run failed: %s", res.Stderr)
			dirs[s.Dir()] = true
		}
		t.NilError(s.Close())
		var left []string
		for d := range dirs {
			if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
				left = append(left, d)
			}
		}
		t.Check(len(left) == 0, "still on disk after Close: %s", strings.Join(left, ", "))
		t.Evidence("after Close nothing is left of the session directory (it held an unreadable directory and a FIFO)")
	},
}
