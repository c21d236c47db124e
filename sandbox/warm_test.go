package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// warmProbe prints what tells one run from another: how many processes
// it sees besides PID 1 and itself (it leaves one behind on purpose, which
// a run sharing its PID namespace would see), whether its private /tmp
// holds what the last run wrote there, LANG, its argument, and how many
// runs have left a mark in the session's directory (the one thing that
// persists).
const warmProbe = `import os, subprocess, sys
open("marks", "a").write("x")
others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())]
print(len(others), os.path.exists("/tmp/mine"), os.environ.get("LANG"), sys.argv[1], len(open("marks").read()))
open("/tmp/mine", "w").write("x")
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)`

// TestPrestart: at the levels an agent's server runs at (L6, and L5 for an
// ordinary user), a session that prestarts runs each next run of the same
// program on an init made for it before it was asked for, and that run is
// the one a cold start makes: its own arguments and environment, a PID
// namespace and a /tmp no other run had, the session's files. A run of
// another program starts cold, and Close leaves nothing: no init, no
// control group, no directory, none of the processes the runs left.
func TestPrestart(t *testing.T) {
	for _, n := range levelsHere(t, 5) {
		t.Run(fmt.Sprintf("L%d", n), func(t *testing.T) {
			root := testRoot(t)
			before := leftovers(t, root)
			s, err := NewSession(Options{Policy: MustPreset(n), Root: root, Prestart: true})
			assert.NilError(t, err)
			for i := range 4 {
				arg := "run" + strconv.Itoa(i)
				res, err := s.Run(context.Background(), Command{Path: python, Args: []string{"-c", warmProbe, arg},
					Env: []string{"LANG=C.UTF-8"}, Dir: s.Dir()})
				assert.NilError(t, err)
				assert.Equal(t, res.Reason, ReasonExited, "%s: %s", res.Message, res.Stderr)
				assert.Check(t, is.Equal(res.Prestarted, i > 0), "run %d: only the first starts cold", i)
				assert.Check(t, is.Equal(res.Stdout, fmt.Sprintf("0 False C.UTF-8 %s %d\n", arg, i+1)), "run %d", i)
			}
			res, err := s.Run(context.Background(), Command{Path: "/bin/sh", Args: []string{"-c", "exit 3"}, Dir: s.Dir()})
			assert.NilError(t, err)
			assert.Check(t, is.Equal(res.ExitCode, 3))
			assert.Check(t, !res.Prestarted, "another program starts cold")
			warmInits := func() int { return len(initsOf(s.Dir())) }
			assert.Check(t, warmInits() <= 1, "one init waits at most")
			assert.NilError(t, s.Close())
			assert.Check(t, is.Equal(warmInits(), 0), "the waiting init is gone with the session")
			assert.Check(t, is.DeepEqual(leftovers(t, root), before), "left behind")
		})
	}
}

// TestPrestartClockStartsAtHandover: a run's clock starts when it is
// handed to the waiting init, not when the init was made. An init that
// waited longer than the time limit still runs its program to the end,
// and a runaway on it is stopped at the limit, counted from the handover.
func TestPrestartClockStartsAtHandover(t *testing.T) {
	for _, n := range levelsHere(t, 5) {
		t.Run(fmt.Sprintf("L%d", n), func(t *testing.T) {
			p := MustPreset(n)
			// Room for Python's start on a loaded machine, and the CPU
			// limits well past the wall clock: the loop must meet the
			// clock, not race it.
			p.Limits.Wall, p.Limits.CPU, p.Limits.CPUHard = 2*time.Second, 5*time.Second, 6*time.Second
			s, err := NewSession(Options{Policy: p, Root: testRoot(t), Prestart: true})
			assert.NilError(t, err)
			defer func() { assert.Check(t, s.Close()) }()
			run := func(src string) *Result {
				res, err := s.Run(context.Background(), Command{Path: python, Args: []string{"-c", src}, Dir: s.Dir()})
				assert.NilError(t, err)
				return res
			}
			run("pass")
			time.Sleep(p.TimeLimit() + 300*time.Millisecond)
			res := run("print('done')")
			assert.Check(t, res.Prestarted)
			assert.Check(t, is.Equal(res.Reason, ReasonExited), "%s", res.Message)
			assert.Check(t, is.Equal(res.Stdout, "done\n"))

			time.Sleep(p.TimeLimit() + 300*time.Millisecond)
			res = run("while True: pass")
			assert.Check(t, res.Prestarted)
			assert.Check(t, is.Equal(res.Reason, ReasonTimeout), "%s", res.Message)
			assert.Check(t, res.Wall >= p.TimeLimit(), "stopped after %v, before the limit %v", res.Wall, p.TimeLimit())
			// The margin is for a loaded machine; an init whose clock
			// started at its making would have stopped the loop at once.
			assert.Check(t, res.Wall < p.TimeLimit()+2*time.Second, "stopped after %v", res.Wall)
		})
	}
}

// initsOf lists the live inits (the sandbox's, by their argv[0]) whose
// config names dir: the session's.
func initsOf(dir string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if args[0] == initArg0 && strings.Contains(string(b), dir) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestPrestartFailureLeavesNothing: an init that cannot be prestarted
// (here at L6 in a directory with no filesystem of its own to cap the
// disk) leaves nothing of what was made before the failure: no control
// group, no open descriptor; the next run starts cold and meets the
// reason itself.
func TestPrestartFailureLeavesNothing(t *testing.T) {
	hardenedHere(t)
	root := testRoot(t)
	dir := ownedDir(t, root, "not-a-session-store")
	before, fds := leftovers(t, root), openFDs(t)
	w, err := prestart(MustPreset(6), Command{Path: python, Dir: dir}, dir)
	assert.Check(t, w == nil)
	assert.Check(t, errors.Is(err, ErrUnavailable), "%v", err)
	assert.Check(t, is.DeepEqual(leftovers(t, root), before), "left behind")
	assert.Check(t, is.Equal(openFDs(t), fds), "descriptors left open")
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	assert.NilError(t, err)
	return len(entries)
}

// TestEarlyResult: at L6 a warm run's Result is made at the reaper's
// report that the program ended with nothing else left in its namespace,
// before the init has exited (the session settles that before its next
// run and at Close), and it is the Result a wait for the init gives:
// every byte of output however much there was, the exit code, the
// program's own CPU time. A run that leaves a process behind is not
// settled early: the end of its namespace kills the process before Run
// returns, as before. Close leaves nothing.
func TestEarlyResult(t *testing.T) {
	hardenedHere(t)
	root := testRoot(t)
	before := leftovers(t, root)
	s, err := NewSession(Options{Policy: MustPreset(6), Root: root, Prestart: true})
	assert.NilError(t, err)
	run := func(src string) *Result {
		t.Helper()
		res, err := s.Run(context.Background(), Command{Path: python, Args: []string{"-c", src}, Dir: s.Dir()})
		assert.NilError(t, err)
		return res
	}
	run("pass") // cold: the runs below go on inits made for them
	for _, n := range []int{0, 10, 200 << 10, 3 << 20} {
		res := run(fmt.Sprintf("import sys; sys.stdout.write('x' * %d); sys.stderr.write('e' * 5000); sys.exit(3)", n))
		assert.Check(t, res.Prestarted)
		assert.Check(t, s.settling != nil, "%d bytes: the Result was not made at the report", n)
		assert.Check(t, is.Equal(res.Reason, ReasonExited), "%s", res.Message)
		assert.Check(t, is.Equal(res.ExitCode, 3))
		assert.Check(t, is.Equal(res.StdoutBytes, int64(n)), "stdout")
		assert.Check(t, is.Equal(res.StderrBytes, int64(5000)), "stderr")
		assert.Check(t, res.CPU > 0 && res.CPU <= res.Wall+time.Second, "CPU %v in %v", res.CPU, res.Wall)
	}

	tok := token(t)
	res := run(fmt.Sprintf("import subprocess, sys; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)', %q], start_new_session=True)", tok))
	assert.Check(t, is.Equal(res.Reason, ReasonExited), "%s", res.Message)
	assert.Check(t, s.settling == nil, "settled early, with a process left in the namespace")
	assert.Check(t, is.Len(alive(tok), 0), "the process left behind outlived Run")

	assert.NilError(t, s.Close())
	assert.Check(t, is.DeepEqual(leftovers(t, root), before), "left behind")
}
