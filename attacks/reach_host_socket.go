package attacks

import (
	"os"
	"path/filepath"

	"sandboxlab/sandbox/evidence"
)

var reachHostSocketSpec = &spec{
	id:        "reach_host_socket",
	escapes:   "a host service's Unix socket in a world-writable host directory that is no scratch directory receives its bytes",
	firstStop: 6,
	new:       func() attack { return &reachHostSocket{} },
	elsewhere: elsewhere{harmlessAsRoot: true},
}

// reachHostSocket's service listens in a shared directory of the
// fixtures, mode 1777 as a shared directory on a host is: L5 covers the
// usual scratch directories, not every place anyone may write, and
// neither Landlock nor a read-only mount governs a connect.
type reachHostSocket struct {
	rootWatch
	path     string
	honeypot *evidence.Honeypot
}

func (h *reachHostSocket) setup(e *env) error {
	dir := filepath.Join(e.fx.root, "public")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o1777); err != nil {
		return err
	}
	h.path = filepath.Join(dir, "service.sock")
	hp, err := evidence.StartUnixHoneypot(h.path)
	if err != nil {
		return err
	}
	h.honeypot = hp
	e.onCleanup(hp.Close)
	return nil
}

func (h *reachHostSocket) args(*env) []string { return []string{h.path} }

func (h *reachHostSocket) judge(e *env) verdict {
	conns, received, sample := h.honeypot.Received()
	if received > 0 {
		return escaped("the host service at %s received %d bytes on %d connections: %q", h.path, received, conns, sample)
	}
	own, note := h.ownRoot(e)
	return e.layer(own, "allowlist root: the directory is absent",
		"the host service received nothing (%d connections); %s%s", conns, lastLine(e.res.Stdout), note)
}
