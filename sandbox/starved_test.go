package sandbox

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestStarvedTimeout: a run stopped at its time limit says whether it was
// starved of CPU, from the kernel's run-queue counts. The program pins
// itself to CPU 0 and loops; beside six busy loops pinned there too it
// gets about a seventh of the core and waits for it the rest of the time
// (far above the half the flag needs, and more load only adds to it). A
// program that sleeps to the same limit waits for no CPU: not starved.
func TestStarvedTimeout(t *testing.T) {
	hardenedHere(t)
	root := testRoot(t)
	p := MustPreset(6)

	asleep := runPy(t, root, p, Command{}, "import time\ntime.sleep(30)")
	assert.Check(t, is.Equal(asleep.Reason, ReasonTimeout))
	assert.Check(t, !asleep.Starved, "a sleeping program read as starved: waited %v over %d threads", asleep.RunQueueWait, asleep.RunQueueTasks)

	var cpu0 unix.CPUSet
	cpu0.Set(0)
	for range 6 {
		cmd := exec.Command("/bin/sh", "-c", "while :; do :; done")
		// A session each: with autogroup scheduling the kernel shares a
		// core between sessions first, so six loops of one session would
		// take only half of it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		assert.NilError(t, cmd.Start())
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
		assert.NilError(t, unix.SchedSetaffinity(cmd.Process.Pid, &cpu0))
	}
	crowded := runPy(t, root, p, Command{}, "import os\nos.sched_setaffinity(0, {0})\nwhile True: pass")
	assert.Check(t, is.Equal(crowded.Reason, ReasonTimeout), "cpu %v", crowded.CPU)
	assert.Check(t, crowded.Starved, "a program crowded off its core read as not starved: waited %v over %d threads in %v (cpu %v)",
		crowded.RunQueueWait, crowded.RunQueueTasks, crowded.Wall, crowded.CPU)
	t.Logf("asleep: waited %v; crowded: waited %v over %d threads in %v, cpu %v",
		asleep.RunQueueWait.Round(time.Millisecond), crowded.RunQueueWait.Round(time.Millisecond), crowded.RunQueueTasks,
		crowded.Wall.Round(time.Millisecond), crowded.CPU.Round(time.Millisecond))
}

// TestStarvedNeedsHalfTheLimit: the rule itself, at its edges. One
// thread's wait decides, not the mean: a fork bomb's parent kept from its
// core for most of the limit, beside 39 children asleep, was starved.
func TestStarvedNeedsHalfTheLimit(t *testing.T) {
	limit := 2 * time.Second
	for _, c := range []struct {
		u    usage
		want bool
	}{
		{usage{RunQueue: time.Second, Tasks: 1, MaxRunQueue: time.Second}, true},
		{usage{RunQueue: time.Second - time.Millisecond, Tasks: 1, MaxRunQueue: time.Second - time.Millisecond}, false},
		{usage{RunQueue: 3 * time.Second, Tasks: 4, MaxRunQueue: 750 * time.Millisecond}, false},
		{usage{RunQueue: 4 * time.Second, Tasks: 4, MaxRunQueue: time.Second}, true},
		{usage{RunQueue: 1400 * time.Millisecond, Tasks: 40, MaxRunQueue: 1300 * time.Millisecond}, true}, // a mean of 35 ms
		{usage{RunQueue: time.Hour, Tasks: 0, MaxRunQueue: time.Hour}, false},                             // nothing read
	} {
		assert.Check(t, is.Equal(starved(c.u, limit), c.want), "%+v", c.u)
	}
	assert.Check(t, !starved(usage{RunQueue: time.Hour, Tasks: 1, MaxRunQueue: time.Hour}, 0), "no limit, no starving")
}

// TestShortProgramBesideBusyLoops: a short program beside eight busy
// loops, each a process in a session of its own, exits with its answer,
// or at worst is starved: never a plain timeout, which would tell the
// model its code was slow.
func TestShortProgramBesideBusyLoops(t *testing.T) {
	hardenedHere(t)
	root := testRoot(t)
	for range 8 {
		cmd := exec.Command("/bin/sh", "-c", "while :; do :; done")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		assert.NilError(t, cmd.Start())
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	}
	for i := range 5 {
		res := runPy(t, root, MustPreset(6), Command{}, "print(sum(range(1000)))")
		ok := res.Reason == ReasonExited && res.ExitCode == 0 && res.Stdout == "499500\n" || res.Reason == ReasonTimeout && res.Starved
		assert.Check(t, ok, "run %d: %s (exit %d) in %v, waited %v for a CPU over %d threads", i, res.Reason, res.ExitCode, res.Wall, res.RunQueueWait, res.RunQueueTasks)
	}
}
