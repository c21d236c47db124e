package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/sandbox/procfs"
)

// reuseRuns is how many runs TestNoSignalAfterReap cancels as they end.
const reuseRuns = 1000

// TestNoSignalAfterReap: once the program's first process has been
// reaped its pid is free, and so, with no one left in them, are its
// process group and session ids: a signal sent to any of them then may
// reach another process. The test supervises 1,000 runs of a program
// that exits at once, and cancels two runs in three at the moment the
// program exits, or as it starts, so that the supervisor's kill races
// the end of the run; the third leaves a child behind for the sweep to
// kill. Each time, right after the reap, it starts a canary with the
// program's pid, as its own session and group leader: a kill of the
// stale pid, group or session, or of /proc's members of them, would hit
// it. None may.
//
// It runs in a PID namespace of its own, where it can choose the next pid
// (ns_last_pid) without touching the host's.
func TestNoSignalAfterReap(t *testing.T) {
	id := HostIdentity()
	cmd := exec.Command("/proc/self/exe", "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=pid-reuse")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: id.UID, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: id.GID, Size: 1}},
		Credential:  &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true},
		Pdeathsig:   syscall.SIGKILL,
	}
	start := time.Now()
	out, err := cmd.CombinedOutput()
	assert.NilError(t, err, string(out))
	t.Logf("%s in %v", strings.TrimSpace(string(out)), time.Since(start).Round(time.Millisecond))
	m := regexp.MustCompile(`runs=(\d+) placed=(\d+) hit=(\d+) cancelled=(\d+)`).FindStringSubmatch(string(out))
	assert.Assert(t, m != nil, "helper said: %s", out)
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	assert.Check(t, is.Equal(n(1), reuseRuns))
	assert.Check(t, is.Equal(n(2), reuseRuns), "a canary had the reaped pid after every run")
	assert.Check(t, is.Equal(n(3), 0), "canaries signalled after the reap")
	// The supervisor stopped runs (the early cancels, at least), and
	// the runs not cancelled were swept.
	assert.Check(t, n(4) > 0 && n(4) <= reuseRuns*2/3, "%d of %d runs counted as cancelled", n(4), reuseRuns)
}

// pidReuseHelper is TestNoSignalAfterReap's body, as PID 1 of a PID
// namespace (and root of a user and a mount namespace) of its own.
func pidReuseHelper() int {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fmt.Println("setup: making mounts private:", err)
		return 1
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		fmt.Println("setup: mounting proc:", err)
		return 1
	}
	p := MustPreset(1) // a session of its own, the tree kill and the sweep
	placed, hit, cancelled := 0, 0, 0
	for i := range reuseRuns {
		var canary *exec.Cmd
		reapedHook = func(pid int) {
			reapOrphans()
			canary = canaryAt(pid)
		}
		o, err := cancelAtExit(p, cancelWhen(i%3))
		reapedHook = nil
		if err != nil {
			fmt.Println("run:", err)
			return 1
		}
		if o.stoppedBy == ReasonSignal {
			cancelled++
		}
		if canary == nil {
			continue
		}
		placed++
		// Whatever was to be sent has been: supervise has returned.
		var info unix.Siginfo
		err = unix.Waitid(unix.P_PID, canary.Process.Pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if err != nil || info.Signo != 0 {
			hit++
		}
		canary.Process.Kill()
		canary.Wait()
	}
	fmt.Printf("runs=%d placed=%d hit=%d cancelled=%d\n", reuseRuns, placed, hit, cancelled)
	return 0
}

// cancelWhen is when cancelAtExit cancels the run.
type cancelWhen int

const (
	cancelEarly cancelWhen = iota // as the program starts, racing its exit
	cancelAtEnd                   // as the program exits
	cancelNever                   // never: the program leaves a child to sweep
)

// cancelAtExit supervises a program that exits at once under p, and
// cancels the run when says.
func cancelAtExit(p Policy, when cancelWhen) (outcome, error) {
	ps, err := newPipes()
	if err != nil {
		return outcome{}, err
	}
	cmd := &exec.Cmd{Path: "/bin/true", Args: []string{"true"}, Stdout: ps.outW, Stderr: ps.errW,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	if when == cancelNever {
		cmd.Path, cmd.Args = "/bin/sh", []string{"sh", "-c", "/bin/sleep 60 & exit 0"}
	}
	started := time.Now()
	if err := cmd.Start(); err != nil {
		ps.close()
		return outcome{}, err
	}
	ps.closeChildEnds()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	switch when {
	case cancelEarly:
		cancel()
	case cancelAtEnd:
		fd, err := unix.PidfdOpen(cmd.Process.Pid, 0) // not reaped yet: it is the program's
		if err != nil {
			return outcome{}, err
		}
		go func() {
			defer unix.Close(fd)
			unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, -1)
			cancel()
		}()
	}
	return (&liveRun{p: p, ps: ps, cmd: cmd, rs: runStart{at: started}}).supervise(ctx), nil
}

// reapOrphans reaps the zombies this process, PID 1 of its namespace,
// adopted: the sweep's victims, which would hold the run's session id.
func reapOrphans() {
	procs, _ := procfs.Scan()
	for _, p := range procs {
		if p.PPID == os.Getpid() && !p.Alive() {
			unix.Wait4(p.PID, nil, unix.WNOHANG, nil)
		}
	}
}

// canaryAt starts a process with pid, leader of its own session, or
// returns nil if pid cannot be had: the kernel gives the next pid after
// ns_last_pid, unless a thread of this process takes it first.
func canaryAt(pid int) *exec.Cmd {
	for range 20 {
		if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0); err != nil {
			return nil
		}
		c := exec.Command("/bin/sleep", "60")
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
		if c.Start() != nil {
			return nil
		}
		if c.Process.Pid == pid {
			return c
		}
		c.Process.Kill()
		c.Wait()
	}
	return nil
}
