package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"io"
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
	"gotest.tools/v3/poll"
	"gotest.tools/v3/skip"

	"sandboxlab/sandbox/procfs"
)

// These tests use the kernel's own control groups (cgroup v1 as root on
// these machines and in CI, or a delegated v2 subtree) and skip, saying
// why, where neither is there.

const python = "/usr/bin/python3" // Debian's, never a pyenv shim

// kernelGroup makes a real group and checks, at the test's end, that Close
// left none of its directories behind.
func kernelGroup(t *testing.T, c Config) *Group {
	t.Helper()
	g, err := New(c)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("no control groups to test with: %v", err)
	}
	assert.NilError(t, err)
	dirs := g.Dirs()
	t.Cleanup(func() {
		assert.Check(t, g.Close())
		for _, d := range dirs {
			_, err := os.Stat(d)
			assert.Check(t, errors.Is(err, os.ErrNotExist), "left behind: %s", d)
		}
	})
	return g
}

// started is a process placed in its group before its first instruction.
type started struct {
	cmd *exec.Cmd
	out *bufio.Reader
}

// startInGroup starts argv in g the way the sandbox does on cgroup v1: a
// shell that waits for a line on stdin is started, added to the group, and
// only then told to exec argv, so nothing of argv runs outside the group.
func startInGroup(t *testing.T, g *Group, argv ...string) started {
	t.Helper()
	cmd := exec.Command("/bin/sh", append([]string{"-c", `read go && exec "$@"`, "sh"}, argv...)...)
	cmd.WaitDelay = 5 * time.Second
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	assert.NilError(t, err)
	out, err := cmd.StdoutPipe()
	assert.NilError(t, err)
	assert.NilError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	assert.NilError(t, g.Add(cmd.Process.Pid))
	_, err = io.WriteString(in, "go\n")
	assert.NilError(t, err)
	in.Close()
	return started{cmd: cmd, out: bufio.NewReader(out)}
}

func needPython(t *testing.T) {
	_, err := os.Stat(python)
	skip.If(t, err != nil, "%s is missing", python)
}

// forker forks 40 children that sleep, and reports how many forks
// succeeded, failed with EAGAIN, or failed otherwise.
const forker = `
import errno, os, sys, time
ok = eagain = other = 0
for i in range(40):
    try:
        pid = os.fork()
    except OSError as e:
        if e.errno == errno.EAGAIN:
            eagain += 1
        else:
            other += 1
        continue
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    ok += 1
print(ok, eagain, other, flush=True)
time.sleep(60)
`

func TestHardProcessCap(t *testing.T) {
	needPython(t)
	g := kernelGroup(t, Config{Pids: 16})

	// Watch the group while it runs: neither the kernel's count nor the
	// listed processes may ever exceed the cap.
	var mu sync.Mutex
	mostCurrent, mostListed, samples := int64(0), 0, 0
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			n, err1 := readInt(g.pids, "pids.current")
			pids, err2 := readPIDs(g.pids)
			mu.Lock()
			if err1 == nil && err2 == nil {
				samples++
				mostCurrent = max(mostCurrent, n)
				mostListed = max(mostListed, len(pids))
			}
			mu.Unlock()
		}
	}()

	p := startInGroup(t, g, python, "-c", forker)
	line, err := p.out.ReadString('\n')
	close(stop)
	<-done
	assert.NilError(t, err)
	var ok, eagain, other int
	_, err = fmt.Sscan(line, &ok, &eagain, &other)
	assert.NilError(t, err)

	s, err := g.Stats()
	assert.NilError(t, err)
	t.Logf("forks: %d ok, %d EAGAIN, %d other; most alive: pids.current %d, cgroup.procs %d (%d samples); kernel: pids.peak %d, pids.events max %d",
		ok, eagain, other, mostCurrent, mostListed, samples, s.PidsPeak, s.PidsLimitHits)
	// python itself is the 1st task of 16: 15 forks go through, the 16th
	// and every later one fails at once with EAGAIN.
	assert.Check(t, is.Equal(ok, 15))
	assert.Check(t, is.Equal(eagain, 25))
	assert.Check(t, is.Equal(other, 0))
	assert.Check(t, mostCurrent <= 16, "pids.current reached %d", mostCurrent)
	assert.Check(t, mostListed <= 16, "cgroup.procs listed %d", mostListed)
	assert.Check(t, is.Equal(s.PidsCurrent, int64(16)))
	if s.PidsPeak != 0 {
		assert.Check(t, is.Equal(s.PidsPeak, int64(16)))
	}

	// Close with all 16 still running: they are killed, the group goes.
	assert.NilError(t, g.Close())
	err = p.cmd.Wait()
	assertKilled(t, err)
}

func assertKilled(t *testing.T, err error) {
	t.Helper()
	var exit *exec.ExitError
	assert.Assert(t, errors.As(err, &exit), "want death by SIGKILL, got %v", err)
	ws := exit.Sys().(syscall.WaitStatus)
	assert.Assert(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "want death by SIGKILL, got %v", err)
}

func TestMemoryLimitOOMKills(t *testing.T) {
	needPython(t)
	g := kernelGroup(t, Config{Memory: 64 << 20})
	p := startInGroup(t, g, python, "-c", "b = b'x' * (200 << 20); print('survived')")
	out, _ := io.ReadAll(p.out)
	err := p.cmd.Wait()
	assert.Check(t, !strings.Contains(string(out), "survived"))
	assertKilled(t, err)
	s, err := g.Stats()
	assert.NilError(t, err)
	t.Logf("kernel: %d OOM kills, memory peak %d bytes (limit %d)", s.OOMKills, s.MemoryPeak, 64<<20)
	assert.Check(t, is.Equal(s.OOMKills, int64(1)))
	oom, err := g.OOMKilled()
	assert.NilError(t, err)
	assert.Check(t, oom)
	if s.MemoryPeak != 0 {
		assert.Check(t, s.MemoryPeak <= 64<<20, "peak %d over the limit", s.MemoryPeak)
	}
}

func TestMemoryLimitIsOnRealMemory(t *testing.T) {
	needPython(t)
	g := kernelGroup(t, Config{Memory: 256 << 20})
	// 1 GiB of address space, 10 MiB of it touched: only what is touched
	// counts against the limit.
	p := startInGroup(t, g, python, "-c", `
import mmap
m = mmap.mmap(-1, 1 << 30)
for i in range(0, 10 << 20, 4096):
    m[i] = 1
print(len(m))
`)
	out, _ := io.ReadAll(p.out)
	assert.NilError(t, p.cmd.Wait())
	assert.Equal(t, strings.TrimSpace(string(out)), fmt.Sprint(1<<30))
	s, err := g.Stats()
	assert.NilError(t, err)
	t.Logf("kernel: memory peak %d bytes with 1 GiB mapped", s.MemoryPeak)
	assert.Check(t, is.Equal(s.OOMKills, int64(0)))
	oom, err := g.OOMKilled()
	assert.NilError(t, err)
	assert.Check(t, !oom)
}

func TestCPUWeight(t *testing.T) {
	g := kernelGroup(t, Config{CPUWeight: 200})
	skip.If(t, g.cpu == "", "no cpu controller here")
	w, err := g.CPUWeight()
	assert.NilError(t, err)
	assert.Check(t, is.Equal(w, 200))
	if g.Version() == 1 {
		n, err := readInt(g.cpu, "cpu.shares")
		assert.NilError(t, err)
		assert.Check(t, is.Equal(n, int64(2048)))
	}
	assert.NilError(t, g.SetCPUWeight(33))
	w, err = g.CPUWeight()
	assert.NilError(t, err)
	assert.Check(t, is.Equal(w, 33))

	d := kernelGroup(t, Config{})
	w, err = d.CPUWeight()
	assert.NilError(t, err)
	assert.Check(t, is.Equal(w, DefaultCPUWeight), "runs share equally by default")
}

func TestCloseKillsWhatRunsAndRemovesTheGroup(t *testing.T) {
	g := kernelGroup(t, Config{Pids: 32})
	p := startInGroup(t, g, "/bin/sh", "-c", "sleep 600 & sleep 600 & sleep 600 & echo started; wait")
	line, err := p.out.ReadString('\n')
	assert.NilError(t, err)
	assert.Equal(t, line, "started\n")
	var pids []int
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		pids, err = g.procs()
		if err != nil {
			return poll.Error(err)
		}
		if len(pids) < 4 {
			return poll.Continue("%d processes in the group", len(pids))
		}
		return poll.Success()
	})
	dirs := g.Dirs()
	assert.NilError(t, g.Close())
	for _, d := range dirs {
		_, err := os.Stat(d)
		assert.Check(t, errors.Is(err, os.ErrNotExist), "left behind: %s", d)
	}
	// The shell is this test's child and waits to be reaped; the sleeps
	// were the shell's and are gone (or dead and awaiting their reaper).
	assertKilled(t, p.cmd.Wait())
	for _, pid := range pids {
		if pid == p.cmd.Process.Pid {
			continue
		}
		if st, err := procfs.Stat(pid); err == nil {
			assert.Check(t, !st.Alive(), "process %d still alive", pid)
		}
	}
	assert.NilError(t, g.Close(), "Close is idempotent")
	assert.Check(t, is.Len(g.Dirs(), 0))
}

func TestAddRefusesAfterClose(t *testing.T) {
	g := kernelGroup(t, Config{})
	assert.NilError(t, g.Close())
	assert.ErrorContains(t, g.Add(os.Getpid()), "closed")
}

func TestGroupIsBelowCallersGroup(t *testing.T) {
	m, err := Detect()
	assert.NilError(t, err)
	g := kernelGroup(t, Config{Mounts: &m})
	for _, d := range g.Dirs() {
		parent := filepath.Dir(d)
		if g.Version() == 2 {
			assert.Check(t, is.Equal(parent, m.V2))
			continue
		}
		found := false
		for _, p := range m.V1 {
			found = found || p == parent
		}
		assert.Check(t, found, "%s is not below any of the caller's groups %v", d, m.V1)
	}
}

func TestKillSparesProcessesOutsideTheGroup(t *testing.T) {
	g := kernelGroup(t, Config{})
	// A PID that cgroup.procs listed may name another process by the time
	// its pidfd is open; one outside the group must be left alone.
	outside := exec.Command("/bin/sleep", "600")
	assert.NilError(t, outside.Start())
	defer func() { outside.Process.Kill(); outside.Wait() }()
	inside := startInGroup(t, g, "/bin/sleep", "600")
	assert.Check(t, !g.holds(outside.Process.Pid))
	assert.Check(t, g.holds(inside.cmd.Process.Pid))

	g.killMembers([]int{outside.Process.Pid, inside.cmd.Process.Pid}, time.Now().Add(5*time.Second))
	assertKilled(t, inside.cmd.Wait())
	st, err := procfs.Stat(outside.Process.Pid)
	assert.NilError(t, err)
	assert.Check(t, st.Alive(), "a process outside the group was killed")
}
