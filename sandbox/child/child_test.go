package child

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestHeldUntilReaped: an exited process stays held (a zombie, its pid
// its own) until Reap; after Reap nothing is signalled by number.
func TestHeldUntilReaped(t *testing.T) {
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	assert.NilError(t, cmd.Start())
	p := Hold(cmd.Process.Pid)
	assert.NilError(t, p.WaitExit())
	assert.Check(t, p.Exited())
	st, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID()) + "/stat")
	assert.NilError(t, err, "the exited process is still there, unreaped")
	assert.Check(t, bytes.Contains(st, []byte(") Z ")), "%s", st)
	calls := 0
	assert.Check(t, p.Held(func(pid int) { calls++; assert.Check(t, is.Equal(pid, cmd.Process.Pid)) }))
	assert.Check(t, p.SignalGroup(0), "the group is still the zombie's")
	assert.NilError(t, p.Reap(cmd.Wait))
	assert.Check(t, cmd.ProcessState != nil && cmd.ProcessState.Success())
	assert.Check(t, !p.Held(func(int) { calls++ }), "held after the reap")
	assert.Check(t, is.Equal(calls, 1))
	assert.Check(t, is.ErrorIs(p.SignalGroup(unix.SIGKILL), ErrReaped))
	assert.Check(t, p.Signal(unix.SIGKILL) != nil, "a signal after the reap reaches nobody")
	assert.Check(t, p.Exited())
}

// TestReapWaitsForAKill: Reap does not reap while a kill by number is
// under way.
func TestReapWaitsForAKill(t *testing.T) {
	cmd := exec.Command("/bin/sleep", "60")
	assert.NilError(t, cmd.Start())
	p := Hold(cmd.Process.Pid)
	inside, release := make(chan struct{}), make(chan struct{})
	go p.Held(func(pid int) {
		close(inside)
		<-release
		unix.Kill(pid, unix.SIGKILL)
	})
	<-inside
	reaped := make(chan error)
	go func() { reaped <- p.Reap(cmd.Wait) }()
	select {
	case <-reaped:
		t.Fatal("reaped while a kill by number was under way")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	err := <-reaped
	var exit *exec.ExitError
	assert.Check(t, errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL, "%v", err)
}

// TestTracedStopIsNoEnd: a child that the caller traces stops at its
// exec, and the kernel reports that stop to every wait of the caller's:
// WaitExit waits on until the child really ends, and Exited says no
// meanwhile. With StopIsEnd (the planted defect) the stop ends the wait.
func TestTracedStopIsNoEnd(t *testing.T) {
	for _, stopIsEnd := range []bool{false, true} {
		runtime.LockOSThread() // the tracer is this thread
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
		assert.NilError(t, cmd.Start())
		p := Hold(cmd.Process.Pid)
		p.StopIsEnd = func() bool { return stopIsEnd }
		returned := make(chan error, 1)
		go func() { returned <- p.WaitExit() }()
		select {
		case err := <-returned:
			assert.Check(t, stopIsEnd, "WaitExit returned (%v) while the child was stopped at its exec", err)
		case <-time.After(300 * time.Millisecond):
			assert.Check(t, !stopIsEnd, "with StopIsEnd the stop did not end the wait")
			assert.Check(t, !p.Exited(), "Exited says yes while the child is stopped")
		}
		assert.NilError(t, p.Signal(unix.SIGKILL))
		if !stopIsEnd {
			assert.NilError(t, <-returned)
			assert.Check(t, p.Exited())
		}
		assert.NilError(t, p.Reap(func() error {
			// A traced child's stops come to wait4 too: wait for its end.
			for {
				var st unix.WaitStatus
				if _, err := unix.Wait4(cmd.Process.Pid, &st, 0, nil); err != nil || st.Exited() || st.Signaled() {
					return err
				}
			}
		}))
		runtime.UnlockOSThread()
	}
}

// TestDrainGrace: output that reaches EOF is read whole; a pipe a
// process keeps open is closed after the grace.
func TestDrainGrace(t *testing.T) {
	r, w, err := os.Pipe()
	assert.NilError(t, err)
	var out bytes.Buffer
	var rs Readers
	rs.Read(r, &out)
	w.Write([]byte("hello"))
	w.Close()
	assert.Check(t, rs.Drain(time.Minute), "ended by itself")
	assert.Check(t, is.Equal(out.String(), "hello"))

	r, w, err = os.Pipe()
	assert.NilError(t, err)
	defer w.Close() // held open, as by a process that escaped
	var rs2 Readers
	rs2.Read(r, &bytes.Buffer{})
	start := time.Now()
	assert.Check(t, !rs2.Drain(50*time.Millisecond), "cut short")
	assert.Check(t, time.Since(start) < 10*time.Second)
}

// TestCollect: with a writer still holding the pipes but done writing,
// Collect returns without EOF and has taken every byte written, in
// order, whether the copy had read it already or it was still in the
// pipe (a sequence spanning several pipe buffers has both).
func TestCollect(t *testing.T) {
	for round := range 20 {
		var want []byte
		for i := 0; len(want) < 300<<10; i++ {
			want = strconv.AppendInt(want, int64(i), 10)
			want = append(want, '\n')
		}
		r, w, err := os.Pipe()
		assert.NilError(t, err)
		r2, w2, err := os.Pipe()
		assert.NilError(t, err)
		var out, out2 bytes.Buffer
		var rs Readers
		rs.Read(r, &out)
		rs.Read(r2, &out2)
		_, err = w.Write(want) // the copy takes what the pipe cannot hold
		assert.NilError(t, err)
		_, err = w2.Write([]byte("tail"))
		assert.NilError(t, err)
		done := make(chan struct{})
		go func() { rs.Collect(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: Collect waited for an EOF that never comes", round)
		}
		assert.Check(t, bytes.Equal(out.Bytes(), want), "round %d: %d bytes of %d", round, out.Len(), len(want))
		assert.Check(t, is.Equal(out2.String(), "tail"), "round %d", round)
		w.Close()
		w2.Close()
	}
}
