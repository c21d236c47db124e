package checks

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/verdict"
)

var landlockFS = &Check{
	ID:      "landlock_fs",
	Suite:   verdict.Hardening,
	Promise: "Landlock: the program writes only its session and private directories, reads only the system's, and cannot connect over TCP",
	Level:   6,
	Untimed: true,
	Body: func(t *T) {
		// A user's file outside the session, which the program's identity
		// owns and may write, outside every hidden or private directory:
		// only Landlock stands in the way. The allowlist root is taken
		// away (in it the file would be absent, and Landlock never asked),
		// and so is the network namespace, so that a TCP connect meets
		// Landlock alone; the root has checks of its own.
		dir := t.ownedDir("shared")
		notes, secret := filepath.Join(dir, "notes.txt"), filepath.Join(dir, "secret.txt")
		t.ownedFile(notes, "# notes\n")
		key := token()
		t.ownedFile(secret, key)
		hp, err := evidence.StartHoneypot()
		t.NilError(err)
		t.Cleanup(hp.Close)
		p := Preset(6, notTimed, func(p *sandbox.Policy) {
			p.Filesystem.Expose = nil
			p.Network.Isolate = false
		})
		res := t.runPython(p, sandbox.Command{}, `
import os, socket, sys
notes, secret, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
def tried(what, f):
    try:
        print(what, "->", f())
    except OSError as e:
        print(what, "failed:", e.strerror)
tried("append", lambda: open(notes, "a").write("from the sandbox\n"))
tried("read", lambda: open(secret).read())
def connect():
    s = socket.create_connection(("127.0.0.1", port), timeout=1)
    s.sendall(b"from the sandbox")
    s.close()
tried("connect", connect)
tried("write in the session", lambda: open("mine.txt", "w").write("ok"))
`, notes, secret, strconv.Itoa(hp.Port()))
		out := strings.ReplaceAll(strings.TrimSpace(res.Stdout), "\n", "; ")
		b, err := os.ReadFile(notes)
		t.NilError(err)
		t.Check(string(b) == "# notes\n", "the user's file outside the session changed: %s", out)
		t.Check(!strings.Contains(res.Stdout, key), "the program read a file outside the system's directories: %s", out)
		conns, got, _ := hp.Received()
		t.Check(conns == 0 && got == 0, "a TCP connection reached the host (%d bytes): %s", got, out)
		t.Check(strings.Contains(res.Stdout, "write in the session -> 2"), "the program could not write its own session: %s", out)
		t.Check(res.LandlockABI >= 1, "no Landlock ABI in force in the Result")
		t.Evidence("Landlock ABI %d: %s", res.LandlockABI, out)
	},
}
