package sandbox

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
)

// TestBreakCopyOnWrite: after a child is started in a new user namespace
// (a full fork), writing the pages this process already had faults once a
// page; after breakCopyOnWrite it does not. Faults are counted by the
// kernel, not timed, so the test holds on a loaded machine. The first
// half is the premise: without it the second would prove nothing.
func TestBreakCopyOnWrite(t *testing.T) {
	const pages = 256
	page := os.Getpagesize()
	buf := make([]byte, pages*page)
	touch := func() int64 { // faults taken writing every page of buf, on this thread
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var before, after unix.Rusage
		assert.NilError(t, unix.Getrusage(unix.RUSAGE_THREAD, &before))
		for i := 0; i < len(buf); i += page {
			buf[i]++
		}
		assert.NilError(t, unix.Getrusage(unix.RUSAGE_THREAD, &after))
		return after.Minflt - before.Minflt
	}
	touch() // present, and this process's own
	fork := func() {
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
		if err := cmd.Run(); err != nil {
			t.Skipf("cannot start a child in a new user namespace here: %v", err)
		}
	}

	fork()
	without := touch()
	assert.Assert(t, without >= pages/2, "the premise: after the fork, writing %d pages took only %d faults", pages, without)

	fork()
	breakCopyOnWrite()
	with := touch()
	assert.Assert(t, with < pages/8, "after breakCopyOnWrite, writing %d pages still took %d faults (%d without)", pages, with, without)
	t.Logf("faults writing %d pages after the fork: %d without breakCopyOnWrite, %d with", pages, without, with)
}

func TestPrivateWritable(t *testing.T) {
	for _, c := range []struct {
		line       string
		start, end uintptr
		ok         bool
	}{
		{"7f48c4799000-7f48c47d9000 rw-p 00000000 00:00 0", 0x7f48c4799000, 0x7f48c47d9000, true},
		{"016ac000-0173f000 rw-p 012ab000 fe:00 1234 /usr/bin/x", 0x016ac000, 0x0173f000, true},
		{"7ffe378f8000-7ffe37919000 rw-p 00000000 00:00 0 [stack]", 0x7ffe378f8000, 0x7ffe37919000, true},
		{"00400000-00452000 r-xp 00000000 fe:00 1234 /usr/bin/x", 0, 0, false},
		{"7f0000000000-7f0000001000 rw-s 00000000 00:05 7 /dev/zero", 0, 0, false},
		{"7f0000000000-7f0000001000 ---p 00000000 00:00 0", 0, 0, false},
		{"garbage", 0, 0, false},
		{"", 0, 0, false},
		{"2000-1000 rw-p 0 0 0", 0, 0, false},
	} {
		s, e, ok := privateWritable([]byte(c.line))
		assert.Equal(t, ok, c.ok, c.line)
		assert.Equal(t, s, c.start, c.line)
		assert.Equal(t, e, c.end, c.line)
	}
}
