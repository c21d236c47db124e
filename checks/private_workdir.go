package checks

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"gotest.tools/v3/assert"

	"sandboxlab/sandbox"
)

var privateWorkdir = &Check{
	ID:      "private_workdir",
	Promise: "the program runs in a fresh owner-only directory, not the application's",
	Level:   2,
	Body: func(t *T) {
		app := t.ownedDir("app")
		s := t.session(Preset(2), 0)
		t.python(s, sandbox.Command{Dir: app}, "open('note.txt', 'w').write('written where I stand')")

		_, err := os.Stat(filepath.Join(app, "note.txt"))
		assert.Check(t, errors.Is(err, fs.ErrNotExist), "the program's file landed in the application's directory")
		_, err = os.Stat(filepath.Join(s.Dir(), "note.txt"))
		assert.Check(t, err == nil, "the program's file is not in the session directory: %v", err)
		st, err := os.Stat(s.Dir())
		assert.NilError(t, err)
		assert.Check(t, st.Mode().Perm() == 0o700, "the session directory has mode %v, want 0700", st.Mode().Perm())
		id := sandbox.HostIdentity()
		assert.Check(t, int(st.Sys().(*syscall.Stat_t).Uid) == id.UID, "the session directory is not owned by the program's uid %d", id.UID)
		t.Evidence("the file landed in the session directory (mode %v, uid %d), not the application's", st.Mode().Perm(), id.UID)
	},
}
