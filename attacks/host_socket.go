package attacks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sandboxlab/sandbox/evidence"
)

var hostSocketSpec = &spec{
	id:        "host_socket",
	escapes:   "a host service's Unix socket in a shared directory (/run/lock) receives its bytes",
	firstStop: 5,
	new:       func() attack { return &hostSocket{} },
	elsewhere: elsewhere{harmlessAsRoot: true},
}

// hostSocket's service is a honeypot on a Unix socket that anyone may
// connect to, in a directory of its own where host services keep theirs.
type hostSocket struct {
	path     string
	honeypot *evidence.Honeypot
}

// socketDirs are where the service's directory is made, first that
// exists: /run/lock is writable by anyone on Debian, so a harness that is
// not root can make it too.
var socketDirs = []string{"/run/lock", "/run", "/dev/shm"}

func (h *hostSocket) setup(e *env) error {
	for _, base := range socketDirs {
		dir := filepath.Join(base, "sandboxlab-"+e.token)
		if err := os.Mkdir(dir, 0o755); err != nil {
			continue
		}
		e.onCleanup(func() { os.RemoveAll(dir) })
		h.path = filepath.Join(dir, "service.sock")
		hp, err := evidence.StartUnixHoneypot(h.path)
		if err != nil {
			return err
		}
		h.honeypot = hp
		e.onCleanup(hp.Close)
		return nil
	}
	return fmt.Errorf("no directory for the host service's socket in %v", socketDirs)
}

func (h *hostSocket) args(*env) []string { return []string{h.path} }

func (h *hostSocket) judge(e *env) verdict {
	conns, received, sample := h.honeypot.Received()
	if received > 0 {
		return escaped("the host service at %s received %d bytes on %d connections: %q", h.path, received, conns, sample)
	}
	covering := "/run"
	for _, d := range e.iso.privateTmp {
		if strings.HasPrefix(h.path, d+"/") {
			covering = d
		}
	}
	return e.programLayer(e.iso.private(covering), "private "+covering,
		"the host service received nothing (%d connections); %s", conns, lastLine(e.res.Stdout))
}
