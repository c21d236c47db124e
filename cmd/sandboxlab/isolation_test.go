package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/icmd"
	"gotest.tools/v3/poll"

	"sandboxlab/sandbox/procfs"
)

// tmpdir makes a $TMPDIR for the binary that the sandboxed program's
// identity can pass through, and removes it with whatever is left.
func tmpdir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sandboxlab-cli-tmp-")
	assert.NilError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	assert.NilError(t, os.Chmod(dir, 0o711))
	return dir
}

// TestSessionsApartFromTheShell: three L5 sessions, each run from a
// separate 'sandboxlab run --session' at the same time, try to list, read
// and hard-link each other's files and to kill each other's programs.
// None gets anything, and every program ends on its own.
func TestSessionsApartFromTheShell(t *testing.T) {
	env := []string{"TMPDIR=" + tmpdir(t)}
	const n = 3
	var dirs, secrets, tags [n]string
	for i := range n {
		res := run(t, env, "session", "new")
		res.Assert(t, icmd.Success)
		dirs[i] = strings.TrimSpace(res.Stdout())
		t.Cleanup(func() { run(t, env, "session", "rm", dirs[i]) })
		secrets[i], tags[i] = procfs.Tag(), procfs.Tag()
		in := filepath.Join(t.TempDir(), "secret.txt")
		assert.NilError(t, os.WriteFile(in, []byte(secrets[i]), 0o644))
		run(t, env, "files", "--session", dirs[i], "put", "secret.txt", in).Assert(t, icmd.Success)
	}
	// Each program gets the others' directories and their tags reversed
	// (its own command line must not carry them), tries everything, and
	// stays a second so that the others find it running.
	const prog = `
import os, signal, sys, time
for d, tag in zip(sys.argv[1::2], sys.argv[2::2]):
    tag = tag[::-1]
    for what, f in (("list", lambda: os.listdir(d)), ("read", lambda: open(os.path.join(d, "secret.txt")).read()),
                    ("link", lambda: os.link(os.path.join(d, "secret.txt"), "stolen-" + os.path.basename(d)))):
        try:
            print(what, d, "->", f())
        except OSError as e:
            print(what, d, "failed:", e.strerror)
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if tag.encode() in open("/proc/%s/cmdline" % pid, "rb").read():
                os.kill(int(pid), signal.SIGKILL)
                print("killed", pid)
        except OSError:
            pass
time.sleep(1)
`
	results := make([]*icmd.Result, n)
	var wg sync.WaitGroup
	for i := range n {
		args := []string{"run", "--level", "5", "--session", dirs[i], "--", "/usr/bin/python3", "-c", prog}
		for j := range n {
			if j != i {
				args = append(args, dirs[j], reverse(tags[j]))
			}
		}
		args = append(args, tags[i])
		wg.Add(1)
		go func() { defer wg.Done(); results[i] = run(t, env, args...) }()
	}
	wg.Wait()
	for i, res := range results {
		res.Assert(t, icmd.Success) // exited 0 by itself: nobody killed it
		for j := range n {
			assert.Check(t, !strings.Contains(res.Stdout(), secrets[j]) || i == j, "session %d read session %d's secret:\n%s", i, j, res.Stdout())
		}
		assert.Check(t, !strings.Contains(res.Stdout(), "->"), "session %d reached another:\n%s", i, res.Stdout())
		assert.Check(t, !strings.Contains(res.Stdout(), "killed"), "session %d killed another's program:\n%s", i, res.Stdout())
		ls := run(t, env, "files", "--session", dirs[i], "ls")
		assert.Check(t, !strings.Contains(ls.Stdout(), "stolen"), "session %d holds a link:\n%s", i, ls.Stdout())
	}
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// TestKilledCLILeavesNothing: SIGKILL the CLI in the middle of an L5 run.
// Its program dies with it, and the next start of sandboxlab removes the
// session directory it left.
func TestKilledCLILeavesNothing(t *testing.T) {
	tmp := tmpdir(t)
	tag := procfs.Tag()
	cmd := exec.Command(bin, "run", "--level", "5", "--", "/usr/bin/python3", "-c", "import time\ntime.sleep(30)", tag)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	assert.NilError(t, cmd.Start())
	t.Cleanup(func() { procfs.KillWithArg(tag, 5*time.Second) })
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if len(procfs.WithArg(tag)) > 0 && len(sessions(t, tmp)) == 2 {
			return poll.Success()
		}
		return poll.Continue("waiting for the program and its session")
	}, poll.WithTimeout(10*time.Second), poll.WithDelay(20*time.Millisecond))

	assert.NilError(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if left := procfs.WithArg(tag); len(left) > 0 {
			return poll.Continue("%d of the run's processes alive", len(left))
		}
		return poll.Success()
	}, poll.WithTimeout(10*time.Second), poll.WithDelay(20*time.Millisecond))
	assert.Check(t, is.Len(sessions(t, tmp), 2), "the killed CLI could not remove its session (directory and owner record)")

	run(t, []string{"TMPDIR=" + tmp}, "run", "--level", "0", "--", "/bin/true").Assert(t, icmd.Success)
	assert.Check(t, is.Len(sessions(t, tmp), 0), "the next start left the stale session")
}

// sessions lists what a session leaves in dir: its directory and its
// owner record.
func sessions(t *testing.T, dir string) []string {
	t.Helper()
	got, err := filepath.Glob(filepath.Join(dir, "sandboxlab-session-*"))
	assert.NilError(t, err)
	return got
}
