package checks

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

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
		t.Check(errors.Is(err, fs.ErrNotExist), "the program's file landed in the application's directory")
		_, err = os.Stat(filepath.Join(s.Dir(), "note.txt"))
		t.Check(err == nil, "the program's file is not in the session directory: %v", err)
		st, err := os.Stat(s.Dir())
		t.NilError(err)
		t.Check(st.Mode().Perm() == 0o700, "the session directory has mode %v, want 0700", st.Mode().Perm())
		id := sandbox.HostIdentity()
		t.Check(int(st.Sys().(*syscall.Stat_t).Uid) == id.UID, "the session directory is not owned by the program's uid %d", id.UID)
		t.Evidence("the file landed in the session directory (mode %v, uid %d), not the application's", st.Mode().Perm(), id.UID)
	},
}
