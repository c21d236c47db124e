package backends

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/poll"

	"sandboxlab/sandbox/procfs"
)

const python = "/usr/bin/python3"

// launch is a Launch of a Python program with the token on its command
// line, as a backend's program has it; with no backend in front, which
// the harness's holding does not need.
func launch(t *testing.T, source string, watchdog time.Duration) Launch {
	t.Helper()
	if _, err := os.Stat(python); err != nil {
		t.Skipf("needs %s: %v", python, err)
	}
	l := Launch{Argv: []string{python, "-c", source, procfs.Tag()}, Dir: "/", Watchdog: watchdog, OutputMax: 1 << 20, Program: "/nonexistent"}
	l.Token = l.Argv[3]
	if os.Geteuid() == 0 {
		l.Credential = &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}
	}
	return l
}

// assertGone checks that nothing with the run's token is left, and no
// control group of this process's runs.
func assertGone(t *testing.T, token string) {
	t.Helper()
	assert.Check(t, is.Len(procfs.WithArg(token), 0), "a process of the run survived")
	for _, ctl := range []string{"/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids", "/sys/fs/cgroup"} {
		left, _ := filepath.Glob(filepath.Join(ctl, "sandboxlab-run-"+strconv.Itoa(os.Getpid())+"-*"))
		assert.Check(t, is.Len(left, 0), "control groups left in %s", ctl)
	}
}

// TestWatchdogKillsTheTree: a program that forks and never ends is
// stopped by the harness's watchdog, its whole tree noted alive and then
// killed.
func TestWatchdogKillsTheTree(t *testing.T) {
	l := launch(t, "import os, time\nos.fork(); os.fork()\ntime.sleep(60)", 300*time.Millisecond)
	r, err := Start(l)
	assert.NilError(t, err)
	// The watchdog starts with Wait: first let the tree grow.
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if n := len(procfs.WithArg(l.Token)); n < 4 {
			return poll.Continue("%d of 4 processes", n)
		}
		return poll.Success()
	}, poll.WithTimeout(30*time.Second))
	o, err := r.Wait(context.Background())
	assert.NilError(t, err)
	assert.Check(t, is.Equal(o.StoppedBy, StopWatchdog))
	assert.Check(t, is.Equal(o.Signal, "SIGTERM"), "asked to end first")
	assert.Check(t, is.Equal(o.ExitCode, -1))
	assert.Check(t, is.Len(o.Left, 3), "the three forked processes (the first is the backend's own)")
	for _, p := range o.Left {
		assert.Check(t, is.Contains(p.Args, l.Token))
	}
	assertGone(t, l.Token)
}

// TestLeftAfterTheEnd: a child that outlives the program is seen alive
// after the backend's process ended, then killed; one that ends with it
// is not.
func TestLeftAfterTheEnd(t *testing.T) {
	l := launch(t, "import os, sys, time\nif os.fork() == 0:\n    os.close(1); os.close(2); time.sleep(60)\nprint('parent done')", 10*time.Second)
	r, err := Start(l)
	assert.NilError(t, err)
	o, err := r.Wait(context.Background())
	assert.NilError(t, err)
	assert.Check(t, is.Equal(o.StoppedBy, ""))
	assert.Check(t, is.Equal(o.ExitCode, 0))
	assert.Check(t, is.Equal(string(o.Stdout), "parent done\n"))
	assert.Check(t, is.Len(o.Left, 1))
	assertGone(t, l.Token)

	l = launch(t, "import os\nif os.fork() == 0:\n    os._exit(0)\nos.wait()", 10*time.Second)
	r, err = Start(l)
	assert.NilError(t, err)
	o, err = r.Wait(context.Background())
	assert.NilError(t, err)
	assert.Check(t, is.Len(o.Left, 0))
}

// TestTermThenKill: a backend that ignores SIGTERM is killed after the
// grace, with all of its run.
func TestTermThenKill(t *testing.T) {
	if testing.Short() {
		t.Skipf("waits out the %v grace: skipped with -short", termGrace)
	}
	l := launch(t, "import os, signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nos.fork()\ntime.sleep(60)", 200*time.Millisecond)
	r, err := Start(l)
	assert.NilError(t, err)
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if n := len(procfs.WithArg(l.Token)); n < 2 {
			return poll.Continue("%d of 2 processes", n)
		}
		return poll.Success()
	}, poll.WithTimeout(30*time.Second))
	o, err := r.Wait(context.Background())
	assert.NilError(t, err)
	assert.Check(t, is.Equal(o.Signal, "SIGKILL"))
	assertGone(t, l.Token)
}

// TestCancelStops: cancelling the context ends the run at once.
func TestCancelStops(t *testing.T) {
	l := launch(t, "import time\ntime.sleep(60)", time.Minute)
	r, err := Start(l)
	assert.NilError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o, err := r.Wait(ctx)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(o.StoppedBy, StopCancelled))
	assertGone(t, l.Token)
}

// TestOutputKeptAndCounted: the first OutputMax bytes of a stream are
// kept, all of them counted, and the streams stay apart.
func TestOutputKeptAndCounted(t *testing.T) {
	l := launch(t, "import sys\nsys.stdout.write('x' * (3 << 20)); sys.stderr.write('oops')", 10*time.Second)
	r, err := Start(l)
	assert.NilError(t, err)
	o, err := r.Wait(context.Background())
	assert.NilError(t, err)
	assert.Check(t, is.Len(o.Stdout, 1<<20))
	assert.Check(t, is.Equal(o.StdoutBytes, int64(3<<20)))
	assert.Check(t, is.Equal(string(o.Stderr), "oops"))
}

// TestHeldByAGroup: as root on this kind of machine a run is held by a
// control group of its own, and its memory is counted there.
func TestHeldByAGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a cgroup v1 group (or a delegated cgroup v2 subtree)")
	}
	l := launch(t, "b = bytearray(32 << 20)", 10*time.Second)
	r, err := Start(l)
	assert.NilError(t, err)
	o, err := r.Wait(context.Background())
	assert.NilError(t, err)
	assert.Check(t, is.Equal(o.Held, HeldByGroup))
	assert.Check(t, o.MemoryPeak >= 32<<20, "memory peak %d", o.MemoryPeak)
}

func TestStartWantsAnAbsolutePath(t *testing.T) {
	_, err := Start(Launch{Argv: []string{"bwrap"}})
	assert.Check(t, is.ErrorContains(err, "want an absolute path"))
}
