package attacks

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/procfs"
)

var hostProcessSnoopSpec = &spec{
	id:        "host_process_snoop",
	escapes:   "reads the secret in a host canary process's environment",
	firstStop: 3,
	new:       func() attack { return &hostProcessSnoop{} },
	elsewhere: elsewhere{rootRisk: "it reads every process's environment, real secrets included for root"},
}

type hostProcessSnoop struct {
	canary *canary
}

func (h *hostProcessSnoop) setup(e *env) error {
	c, err := startCanary()
	if err != nil {
		return err
	}
	h.canary = c
	e.onCleanup(c.stop)
	return nil
}

func (h *hostProcessSnoop) judge(e *env) verdict {
	pid := h.canary.cmd.Process.Pid
	if strings.Contains(e.output(), h.canary.secret) {
		return escaped("the output holds the secret of canary pid %d", pid)
	}
	if !h.canary.alive() {
		return stopped("unexpected: the canary died", "canary pid %d is gone", pid)
	}
	seen := "canary pid %d alive, its secret not in the output"
	if !e.iso.ownPID && e.iso.ownUser {
		// The canary is in sight, but the kernel lets no process of
		// another user namespace read its environment.
		return e.layer(true, "user namespace", seen, pid)
	}
	return e.layer(e.iso.ownPID, "PID namespace: own /proc", seen, pid)
}

// canaryVar is the variable that holds a canary process's secret.
const canaryVar = "SANDBOXLAB_CANARY"

// canary is a host process outside the sandbox with a secret in its
// environment. It runs as the program's host identity: what may hide it
// is the layer under test, not the uid mapping.
type canary struct {
	cmd    *exec.Cmd
	secret string
}

func startCanary() (*canary, error) {
	c := &canary{secret: "canary-" + randomHex(16)}
	c.cmd = exec.Command("/bin/sleep", "60")
	c.cmd.Env = []string{canaryVar + "=" + c.secret}
	c.cmd.Dir = "/"
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if sandbox.HostRoot() {
		id := sandbox.HostIdentity()
		c.cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(id.UID), Gid: uint32(id.GID), Groups: []uint32{}}
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting canary: %w", err)
	}
	return c, nil
}

// alive reports whether the canary is still running.
func (c *canary) alive() bool {
	p, err := procfs.Stat(c.cmd.Process.Pid)
	return err == nil && p.Alive()
}

// stop kills the canary and reaps it.
func (c *canary) stop() {
	c.cmd.Process.Kill()
	c.cmd.Wait()
}
