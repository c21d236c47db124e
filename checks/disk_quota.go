package checks

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gotest.tools/v3/assert"

	"sandboxlab/sandbox"
)

var diskQuota = &Check{
	ID:      "disk_quota",
	Promise: "when the quota is full the next run is refused; deleting files restores it",
	Level:   2,
	Body: func(t *T) {
		const quota = 1 << 20
		s := t.session(preset(2), quota)
		fill := t.python(s, sandbox.Command{}, "open('fill.bin', 'wb').write(b'x' * (2 << 20))")
		assert.Assert(t, fill.ExitCode == 0, "the program could not fill the quota: %s", fill.Stderr)

		ran := func() bool {
			res := t.python(s, sandbox.Command{}, "open('ran', 'w').write('ran')")
			_, err := os.Stat(filepath.Join(s.Dir(), "ran"))
			if res.Reason == sandbox.ReasonRefused {
				assert.Check(t, strings.Contains(res.Message, "quota"), "a refused run does not say why: %q", res.Message)
			}
			return !errors.Is(err, fs.ErrNotExist)
		}
		assert.Check(t, !ran(), "a run went ahead with 2 MiB in a 1 MiB quota")
		assert.NilError(t, s.Remove("fill.bin"))
		assert.Check(t, ran(), "after deleting the file the next run was still refused")
		t.Evidence("over the 1 MiB quota the run was refused; after deleting fill.bin it ran")
	},
}
