package checks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"sandboxlab/sandbox"
)

var diskQuota = &Check{
	ID:      "disk_quota",
	Promise: "when the quota is full the next run is refused; deleting files restores it",
	Level:   2,
	Body: func(t *T) {
		const quota = 1 << 20
		s := t.session(Preset(2), quota)
		// The program fills the session directory by name, whatever its
		// working directory (that is another layer's promise).
		fill := t.python(s, sandbox.Command{}, "import os, sys\nopen(os.path.join(sys.argv[1], 'fill.bin'), 'wb').write(b'x' * (2 << 20))", s.Dir())
		t.Assert(fill.ExitCode == 0, "the program could not fill the quota: %s", fill.Stderr)

		// Whether a run took place, the host sees by a marker the program
		// writes outside the session.
		out := t.ownedDir("out")
		runs := 0
		ran := func() bool {
			runs++
			marker := filepath.Join(out, fmt.Sprintf("ran-%d", runs))
			res := t.python(s, sandbox.Command{}, "import sys\nopen(sys.argv[1], 'w').write('ran')", marker)
			if res.Reason == sandbox.ReasonRefused {
				t.Check(strings.Contains(res.Message, "quota"), "a refused run does not say why: %q", res.Message)
			}
			_, err := os.Stat(marker)
			return !errors.Is(err, fs.ErrNotExist)
		}
		t.Check(!ran(), "a run went ahead with 2 MiB in a 1 MiB quota")
		t.NilError(s.Remove("fill.bin"))
		t.Check(ran(), "after deleting the file the next run was still refused")
		t.Evidence("over the 1 MiB quota the run was refused; after deleting fill.bin it ran")
	},
}
