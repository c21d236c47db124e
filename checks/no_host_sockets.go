package checks

import (
	"os"
	"path/filepath"
	"strings"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/verdict"
)

var noHostSockets = &Check{
	ID:      "no_host_sockets",
	Suite:   verdict.Hardening,
	Promise: "a host service's Unix socket in a shared directory is out of reach",
	Level:   5,
	Untimed: true,
	Body: func(t *T) {
		// A service's socket where services keep them, reachable by
		// anyone, as /run/docker.sock or a desktop bus often are.
		dir := ""
		for _, base := range []string{"/run/lock", "/run"} {
			d := filepath.Join(base, "sandboxlab-"+token())
			if os.Mkdir(d, 0o755) == nil {
				dir = d
				break
			}
		}
		t.Assert(dir != "", "no place for the host service's socket below /run")
		t.Cleanup(func() { os.RemoveAll(dir) })
		sock := filepath.Join(dir, "service.sock")
		hp, err := evidence.StartUnixHoneypot(sock)
		t.NilError(err)
		t.Cleanup(hp.Close)
		res := t.runPython(Preset(5, notTimed), sandbox.Command{}, `
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
    s.sendall(b"from the sandbox")
    print("connected")
except OSError as e:
    print("connect failed:", e.strerror)
`, sock)
		conns, got, _ := hp.Received()
		t.Check(conns == 0 && got == 0, "the host service at %s received %d connections and %d bytes", sock, conns, got)
		t.Evidence("the host service at %s received nothing; %s", sock, strings.TrimSpace(res.Stdout))
	},
}
