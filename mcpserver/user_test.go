package mcpserver_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/poll"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/procfs"
	"sandboxlab/sandbox/sandboxtest"
)

// TestServerAsOrdinaryUser: the server started by an ordinary user (the
// one SANDBOXLAB_TEST_USER names, default sbxuser, when the tests run as
// root) at L5, the level such a user gets, prestarts as root's does: after
// a call, an init of the next run waits below the server; the next call
// runs on it and sees the session's file; and when the client closes the
// connection the server exits, with its waiting init, session directory
// and control groups gone.
func TestServerAsOrdinaryUser(t *testing.T) {
	if !sandbox.HostRoot() {
		t.Skipf("this user (uid %d) is an ordinary one: the other tests are this test", os.Geteuid())
	}
	cred, _ := sandboxtest.OrdinaryUser(t)
	root := newRoot(t)
	assert.NilError(t, os.Chown(root, int(cred.Uid), int(cred.Gid)))

	// Not a test of the clock: a starved run at the level's 1.5 s failed
	// it once in CI, while every package's tests ran at once.
	cmd := exec.Command(binary(t), "mcp", "--level", "5", "--timeout", "10s")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=" + root, "HOME=/nonexistent"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := (&conn{}).client().Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	assert.NilError(t, err, stderr.String())
	defer cs.Close()
	server := cmd.Process.Pid
	c := &conn{cs: cs, serverPID: server}

	res := call(t, c, "run_python", map[string]any{"code": "import os\nopen('kept.txt', 'w').write('kept')\nprint(os.getuid())"})
	assert.Assert(t, !res.IsError, text(res))

	// The waiting init: a process below the server, which ran as the user.
	var waiting []procfs.Proc
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		waiting = procfs.Tree(server)
		if len(waiting) > 0 {
			return poll.Success()
		}
		return poll.Continue("no prestarted init below the server (pid %d)", server)
	}, poll.WithTimeout(10*time.Second), poll.WithDelay(10*time.Millisecond))
	for _, p := range waiting {
		if status, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/status"); err == nil {
			real := strings.Fields(procfs.StatusField(status, "Uid"))
			assert.Check(t, len(real) > 0 && real[0] == strconv.Itoa(int(cred.Uid)), "process %d (%s) below the server runs as uid %v", p.PID, p.Comm, real)
		}
	}

	res = call(t, c, "run_python", map[string]any{"code": "print(open('kept.txt').read())"})
	assert.Assert(t, !res.IsError, text(res))
	assert.Check(t, is.Contains(text(res), "kept"))

	assert.NilError(t, cs.Close()) // closes its stdin and waits for it to exit
	assert.Check(t, cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 0, "the server's end: %v\n%s", cmd.ProcessState, stderr.String())
	assert.Check(t, is.Contains(stderr.String(), "removed"), "the server's log:\n%s", stderr.String())
	for _, p := range waiting {
		assert.Check(t, procfs.Ended(p.PID, p.Start), "process %d (%s), the server's prestarted init, outlived it", p.PID, p.Comm)
	}
	assert.Check(t, is.Len(groupsOf(server), 0))
	assert.Check(t, !strings.Contains(stderr.String(), "panic"), stderr.String())
}
