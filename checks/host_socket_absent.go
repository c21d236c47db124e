package checks

import (
	"os"
	"path/filepath"
	"strings"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/verdict"
)

var hostSocketAbsent = &Check{
	ID:      "host_socket_absent",
	Suite:   verdict.Hardening,
	Promise: "a host service's Unix socket in a world-writable directory outside the scratch directories is absent from the program's root",
	Level:   6,
	Untimed: true,
	Body: func(t *T) {
		// A shared directory anyone may write, where L5 leaves the host's
		// tree in sight: neither Landlock nor a read-only mount stops a
		// connect to a socket there, only its absence does.
		dir := filepath.Join(t.Root(), "public")
		t.NilError(os.Mkdir(dir, 0o755))
		t.NilError(os.Chmod(dir, 0o1777))
		sock := filepath.Join(dir, "service.sock")
		hp, err := evidence.StartUnixHoneypot(sock)
		t.NilError(err)
		t.Cleanup(hp.Close)
		res := t.runPython(Preset(6, notTimed), sandbox.Command{}, `
import os, socket, sys
path = sys.argv[1]
print("exists:", os.path.exists(path), os.path.exists(os.path.dirname(path)))
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(path)
    s.sendall(b"from the sandbox")
    print("connected")
except OSError as e:
    print("connect failed:", e.strerror)
`, sock)
		out := strings.ReplaceAll(strings.TrimSpace(res.Stdout), "\n", "; ")
		conns, got, _ := hp.Received()
		t.Check(conns == 0 && got == 0, "the host service at %s received %d connections and %d bytes: %s", sock, conns, got, out)
		t.Check(strings.Contains(out, "connect"), "the program did not get to its connect: %s %s", out, lastLine(res.Stderr))
		t.Evidence("the host service at %s received nothing; the program: %s", sock, out)
	},
}
