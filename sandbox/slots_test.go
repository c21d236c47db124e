package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// holdSlotHelper takes the one slot of the directory in slotsEnv, says
// so, and holds it until it is killed or its stdin closes.
func holdSlotHelper() int {
	release, _, err := takeSlot(context.Background(), Queue{Max: 1, Wait: time.Minute})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	defer release()
	fmt.Println("held")
	bufio.NewReader(os.Stdin).ReadString('\n')
	return 0
}

// oneSlot points this process's runs at a fresh directory of slots,
// and starts another process holding its first. It returns that process
// and a function that lets it give the slot back. Runs that use one slot
// (runQueued) then wait for it.
func oneSlot(t *testing.T) (*exec.Cmd, func()) {
	t.Helper()
	dir := t.TempDir()
	assert.NilError(t, os.Chmod(dir, 0o1777|os.ModeSticky))
	t.Setenv(slotsEnv, dir)
	cmd := exec.Command("/proc/self/exe", "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=hold-slot")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	in, err := cmd.StdinPipe()
	assert.NilError(t, err)
	out, err := cmd.StdoutPipe()
	assert.NilError(t, err)
	assert.NilError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	assert.Assert(t, is.Equal(strings.TrimSpace(line), "held"))
	return cmd, func() { in.Close() }
}

// runQueued runs c under p in a session of its own that uses one slot
// of the host's and waits at most wait for it (0: the default), and
// returns the Result its Observe was given too.
func runQueued(t *testing.T, p Policy, wait time.Duration, c Command) *Result {
	t.Helper()
	var observed *Result
	s, err := NewSession(Options{Policy: p, Queue: Queue{Max: 1, Wait: wait}, Observe: func(r *Result) { observed = r }})
	assert.NilError(t, err)
	defer s.Close()
	res, err := s.Run(context.Background(), c)
	assert.NilError(t, err)
	assert.Check(t, observed == res, "Observe was not given the run's Result")
	return res
}

// TestSlotsSharedAcrossProcesses: a slot another process holds delays a
// run until it is given back, and the run says how long it queued; its
// wall clock starts only then.
func TestSlotsSharedAcrossProcesses(t *testing.T) {
	_, giveBack := oneSlot(t)
	const hold = 800 * time.Millisecond
	time.AfterFunc(hold, giveBack)
	res := runQueued(t, MustPreset(1), 0, Command{Path: "/bin/true", Dir: "/"})
	assert.Check(t, is.Equal(res.Reason, ReasonExited))
	assert.Check(t, res.Queued >= hold-50*time.Millisecond, "queued %v, the other held it %v", res.Queued, hold)
	assert.Check(t, res.Wall < res.Queued, "the wall clock counted the queue: wall %v, queued %v", res.Wall, res.Queued)
}

// TestKilledHolderFreesItsSlot: a holder killed with SIGKILL gives its
// slot back by itself (the kernel drops the lock with the descriptor).
func TestKilledHolderFreesItsSlot(t *testing.T) {
	holder, _ := oneSlot(t)
	time.AfterFunc(300*time.Millisecond, func() { holder.Process.Kill() })
	res := runQueued(t, MustPreset(1), 0, Command{Path: "/bin/true", Dir: "/"})
	assert.Check(t, is.Equal(res.Reason, ReasonExited))
	assert.Check(t, res.Queued >= 250*time.Millisecond && res.Queued < 30*time.Second, "queued %v", res.Queued)
}

// TestBusyPastTheBound: a run that cannot get a slot within its bound is
// refused as busy, with nothing run, and says so.
func TestBusyPastTheBound(t *testing.T) {
	oneSlot(t)
	marker := t.TempDir() + "/ran"
	res := runQueued(t, MustPreset(1), 300*time.Millisecond, Command{Path: "/usr/bin/touch", Args: []string{marker}, Dir: t.TempDir()})
	assert.Check(t, is.Equal(res.Reason, ReasonBusy))
	assert.Check(t, is.Contains(res.Message, "nothing ran"))
	assert.Check(t, res.Queued >= 300*time.Millisecond)
	_, err := os.Stat(marker)
	assert.Check(t, os.IsNotExist(err), "a busy run ran")
}
