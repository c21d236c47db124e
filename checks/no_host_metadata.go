package checks

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

var noHostMetadata = &Check{
	ID:      "no_host_metadata",
	Suite:   verdict.Hardening,
	Promise: "the mode, times and extended attributes of a host file the program's identity owns, outside the session, do not change",
	Level:   6,
	Untimed: true,
	Body: func(t *T) {
		// The user's own file, outside every hidden or private directory:
		// the owner may change its metadata, and Landlock has no right
		// for that; only its absence from the program's root stops it.
		dir := t.ownedDir("meta")
		file := filepath.Join(dir, "notes.txt")
		t.ownedFile(file, "# notes\n")
		then := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
		t.NilError(os.Chtimes(file, then, then))
		before := metadataOf(t, file) + " | " + metadataOf(t, dir)
		res := t.runPython(Preset(6, notTimed), sandbox.Command{}, `
import os, sys
path = sys.argv[1]
for what, f in (("chmod", lambda: os.chmod(path, 0o777)), ("utime", lambda: os.utime(path, (0, 0))),
                ("setxattr", lambda: os.setxattr(path, "user.sandboxlab", b"from the sandbox")),
                ("chmod dir", lambda: os.chmod(os.path.dirname(path), 0o777))):
    try:
        f()
        print(what, "done")
    except OSError as e:
        print(what, "failed:", e.strerror)
`, file)
		out := strings.ReplaceAll(strings.TrimSpace(res.Stdout), "\n", "; ")
		after := metadataOf(t, file) + " | " + metadataOf(t, dir)
		t.Check(after == before, "the host file's metadata changed: %s, now %s: %s", before, after, out)
		t.Check(strings.Count(res.Stdout, "\n") == 4, "the program did not get through its attempts: %s %s", out, lastLine(res.Stderr))
		t.Evidence("%s unchanged (%s); the program: %s", file, before, out)
	},
}

// metadataOf is what the check compares of path: its mode, modification
// time and extended attributes.
func metadataOf(t *T, path string) string {
	t.Helper()
	st, err := os.Lstat(path)
	t.NilError(err)
	buf := make([]byte, 4096)
	n, err := unix.Llistxattr(path, buf)
	if err != nil {
		n = 0
	}
	names := strings.ReplaceAll(strings.TrimRight(string(buf[:n]), "\x00"), "\x00", ",")
	return st.Mode().String() + " " + st.ModTime().UTC().Format(time.RFC3339) + " xattrs[" + names + "]"
}
