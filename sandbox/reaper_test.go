package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/skip"

	"sandboxlab/sandbox/boot"
	"sandboxlab/sandbox/procfs"
)

// TestReaperKeepsPID1: at L6 the init stays PID 1 and the program is its
// child, whose exit status and signal come back as its own; the orphans
// the program leaves are reaped; the init's config (with the planted
// defect) is blanked from /proc/1/cmdline. Below L6 the program is PID 1.
func TestReaperKeepsPID1(t *testing.T) {
	hardenedHere(t)
	root := testRoot(t)
	src := `
import os, sys, time
print(os.getpid(), os.getppid())
cmdline = open("/proc/1/cmdline", "rb").read()
print(cmdline.split(b"\0")[0].decode(), b"/etc/" + b"shadow" in cmdline)
if os.fork() == 0:          # a child that leaves an orphan behind
    if os.fork() == 0:
        os._exit(0)
    os._exit(0)
os.wait()
start = time.monotonic()
def state(pid):
    try:
        return open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"
def zombies():
    return [p for p in os.listdir("/proc") if p.isdigit() and state(p) == "Z"]
while zombies() and time.monotonic() - start < 5:
    time.sleep(0.01)
print("zombies", len(zombies()), "after %.0f ms" % ((time.monotonic() - start) * 1000))
sys.exit(7)
`
	res := runPy(t, root, MustPreset(6), Command{}, src)
	t.Logf("L6: %q", res.Stdout)
	lines := strings.Split(res.Stdout, "\n")
	assert.Assert(t, len(lines) >= 3 && res.ExitCode == 7, "stdout %q, stderr %q", res.Stdout, res.Stderr)
	var pid, ppid int
	fmt.Sscan(lines[0], &pid, &ppid)
	assert.Check(t, pid > 1 && ppid == 1, "the program is pid %d, child of %d", pid, ppid)
	assert.Check(t, is.Equal(lines[1], initArg0+" False"), "PID 1's cmdline: the init's, with its config blanked")
	assert.Check(t, strings.HasPrefix(lines[2], "zombies 0 "), "the orphan was not reaped: %s", lines[2])
	assert.Check(t, is.Equal(res.Reason, ReasonExited))
	assert.Check(t, is.Equal(res.ExitCode, 7))
	assert.Check(t, is.Equal(res.StoppedBy, ""))

	res = runPy(t, root, MustPreset(6), Command{}, `import os, signal; os.kill(os.getpid(), signal.SIGUSR1)`)
	assert.Check(t, is.Equal(res.Reason, ReasonSignal))
	assert.Check(t, is.Equal(res.Signal, "SIGUSR1"))
	assert.Check(t, is.Equal(res.ExitCode, -1))

	res = runPy(t, root, MustPreset(5), Command{}, `import os; print(os.getpid())`)
	assert.Check(t, is.Equal(res.Stdout, "1\n"), "below L6 the program stays PID 1")
}

// TestReaperDeadlineUnderLoad: 20 runaway loops at L6, beside four busy
// loops the test starts, are each stopped by the init, which woke within
// the deadline plus BackstopGrace by its own clock; how late the host saw
// each end is logged. Unless -short, the
// same at L5, where the caller's supervisor kills, is measured beside it
// for comparison (not asserted).
func TestReaperDeadlineUnderLoad(t *testing.T) {
	hardenedHere(t)
	for range 4 {
		busyCore(t)
	}
	root := testRoot(t)
	results := runawayLoops(t, root, 6, 20)
	for i, res := range results {
		assert.Check(t, res.Reason == ReasonTimeout && res.TimedOut, "run %d: %s", i, res.Reason)
		assert.Check(t, is.Equal(res.StoppedBy, StoppedByInit), "run %d", i)
		// The init's own promise: it woke within the grace, so the
		// backstop never had to act (StoppedBy above). What the host saw
		// also holds the kernel ending the namespace under the load of
		// the other test binaries (CI once saw 297 ms with the init 74 ms
		// late): it is logged, not bounded.
		assert.Check(t, res.KillLate >= 0, "run %d: seen ending %v after the deadline", i, res.KillLate)
		assert.Check(t, res.InitLate <= BackstopGrace, "run %d: the init woke %v after the deadline", i, res.InitLate)
		// The init's wake-up is a part of the lateness the host saw: a
		// few ms of clock reading apart (the host's deadline counts from
		// just before the monotonic start the init's counts from).
		assert.Check(t, res.InitLate >= 0 && res.InitLate <= res.KillLate+5*time.Millisecond,
			"run %d: the init woke %v late, the host saw the end %v late", i, res.InitLate, res.KillLate)
	}
	t.Logf("L6 (the init's deadline), %s; load %s", lateness(results), loadavg())
	if !testing.Short() {
		t.Logf("L5 (the supervisor's kill), %s; load %s", lateness(runawayLoops(t, root, 5, 20)), loadavg())
	}
}

// runawayLoops runs n runaway loops at level, all at once (the slots
// queue them), and returns their results.
func runawayLoops(t *testing.T, root string, level, n int) []*Result {
	t.Helper()
	tok := token(t)
	t.Cleanup(func() { killTagged(tok) })
	results := make([]*Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := NewSession(Options{Policy: MustPreset(level), Root: root})
			if err != nil {
				errs[i] = err
				return
			}
			defer s.Close()
			results[i], errs[i] = s.Run(context.Background(), Command{Path: python, Args: []string{"-c", "while True: pass", tok}})
		})
	}
	wg.Wait()
	assert.NilError(t, errors.Join(errs...))
	assert.Check(t, is.Len(alive(tok), 0), "loops left running")
	return results
}

// lateness describes how late the host saw the runs end after their
// deadline.
func lateness(results []*Result) string {
	late := make([]time.Duration, len(results))
	for i, r := range results {
		late[i] = r.KillLate
	}
	slices.Sort(late)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }
	woke := make([]time.Duration, len(results))
	for i, r := range results {
		woke[i] = r.InitLate
	}
	slices.Sort(woke)
	return fmt.Sprintf("%d runs, kill late by (ms): min %s, median %s, p90 %s, max %s; the init woke late by (ms, 0 without one): median %s, max %s",
		len(late), ms(late[0]), ms(late[len(late)/2]), ms(late[len(late)*9/10]), ms(late[len(late)-1]), ms(woke[len(woke)/2]), ms(woke[len(woke)-1]))
}

// loadavg is the host's load average, for the log.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// TestReaperSoftCPULimit: as PID 2 a busy loop is stopped at the soft
// CPU limit (SIGXCPU, reason cpu); as PID 1, with the reaper taken away,
// it runs on to the hard limit (SIGKILL). Both at once, on a wall clock
// far out of the way.
func TestReaperSoftCPULimit(t *testing.T) {
	hardenedHere(t)
	root := testRoot(t)
	policy := func(reaper bool) Policy {
		p := MustPreset(6)
		p.Limits.CPU, p.Limits.CPUHard = time.Second, 2*time.Second
		p.Limits.Wall, p.Watchdog = 60*time.Second, 60*time.Second
		p.Processes.Reaper = reaper
		return p
	}
	var pid2, pid1 *Result
	var wg sync.WaitGroup
	wg.Go(func() { pid2 = runPy(t, root, policy(true), Command{}, "while True: pass") })
	wg.Go(func() { pid1 = runPy(t, root, policy(false), Command{}, "while True: pass") })
	wg.Wait()
	assert.Check(t, is.Equal(pid2.Reason, ReasonCPU))
	assert.Check(t, is.Equal(pid2.Signal, "SIGXCPU"))
	// rusage reads under the limit on a loaded VM: wide margins.
	assert.Check(t, pid2.CPU > 500*time.Millisecond && pid2.CPU < 1500*time.Millisecond, "stopped after %v of CPU", pid2.CPU)
	assert.Check(t, is.Equal(pid1.Reason, ReasonCPU))
	assert.Check(t, is.Equal(pid1.Signal, "SIGKILL"), "as PID 1 only the hard limit stops it")
	assert.Check(t, pid1.CPU-pid2.CPU > 400*time.Millisecond, "PID 1 stopped after %v of CPU, PID 2 after %v", pid1.CPU, pid2.CPU)
}

// TestReaperForwardsSignals: the init passes SIGWINCH, SIGHUP and SIGINT
// sent to it on to the program, and a cancelled run's SIGTERM, whose
// handler then runs; signals it does not forward (SIGUSR1, SIGQUIT) reach
// no one and do not end the init. The init catches signals from
// catchDelay into the run on: SIGWINCH, harmless before, is sent until
// the program has it, and the rest after.
func TestReaperForwardsSignals(t *testing.T) {
	hardenedHere(t)
	p := MustPreset(6)
	p.Limits.Wall, p.Watchdog = 30*time.Second, 30*time.Second // the test cancels first
	s, err := NewSession(Options{Policy: p, Root: testRoot(t)})
	assert.NilError(t, err)
	defer func() { assert.Check(t, s.Close()) }()
	tok := token(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	winched := filepath.Join(s.Dir(), "SIGWINCH")
	go func() {
		defer cancel()
		init, _ := initOf(tok)
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(winched); err == nil {
				break
			}
			unix.Kill(init, unix.SIGWINCH)
		}
		for _, sig := range []unix.Signal{unix.SIGHUP, unix.SIGUSR1, unix.SIGQUIT, unix.SIGINT} {
			unix.Kill(init, sig)
			time.Sleep(100 * time.Millisecond)
		}
	}()
	src := `
import signal, sys, time
got = []
def note(n, _):
    name = signal.Signals(n).name
    if name not in got:
        got.append(name)
        open(name, "w").close()
    if n == signal.SIGTERM:
        print(" ".join(got), flush=True)
        sys.exit(0)
for s in (signal.SIGWINCH, signal.SIGHUP, signal.SIGINT, signal.SIGTERM, signal.SIGUSR1, signal.SIGQUIT):
    signal.signal(s, note)
while True:
    time.sleep(0.01)
`
	res, err := s.Run(ctx, Command{Path: python, Args: []string{"-c", src, tok}})
	assert.Check(t, errors.Is(err, context.Canceled), "%v", err)
	assert.Assert(t, res != nil)
	// The order is not asserted: a signal the init's runtime holds
	// pending with another is relayed in signal-number order.
	got := strings.Fields(res.Stdout)
	slices.Sort(got)
	assert.Check(t, is.DeepEqual(got, []string{"SIGHUP", "SIGINT", "SIGTERM", "SIGWINCH"}), "stdout %q, stderr %s", res.Stdout, res.Stderr)
	assert.Check(t, is.Equal(res.ExitCode, 0), "the handler's exit")
	assert.Check(t, is.Equal(res.Reason, ReasonSignal))
	assert.Check(t, is.Equal(res.StoppedBy, StoppedBySupervisor))
}

// initOf returns the host pids of the init whose program is tagged with
// tok and of the program, once both are seen running (zeros if they are
// not within 10 s).
func initOf(tok string) (init, program int) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		init, program = 0, 0
		for _, p := range procfs.WithArg(tok) {
			if args := procfs.Cmdline(p.PID); len(args) > 0 && args[0] == initArg0 {
				init = p.PID
			} else if len(args) > 0 {
				program = p.PID
			}
		}
		if init != 0 && program != 0 {
			return init, program
		}
		time.Sleep(2 * time.Millisecond)
	}
	return 0, 0
}

// TestReaperBackstop: an init that cannot end the run at its deadline
// (stopped with SIGSTOP) is killed by the caller's backstop, BackstopGrace
// later, and the Result says so; nothing of the run is left.
func TestReaperBackstop(t *testing.T) {
	hardenedHere(t)
	tok := token(t)
	t.Cleanup(func() { killTagged(tok) })
	stopped := make(chan error, 1)
	go func() {
		init, _ := initOf(tok)
		if init == 0 {
			stopped <- errors.New("the init and its program were not seen")
			return
		}
		stopped <- unix.Kill(init, unix.SIGSTOP)
	}()
	res := runPy(t, testRoot(t), MustPreset(6), Command{}, "while True: pass", tok)
	assert.NilError(t, <-stopped)
	assert.Check(t, res.Reason == ReasonTimeout && res.TimedOut, "%s", res.Reason)
	assert.Check(t, is.Equal(res.StoppedBy, StoppedByBackstop))
	assert.Check(t, is.Equal(res.Signal, "SIGKILL"))
	assert.Check(t, res.KillLate >= BackstopGrace && res.KillLate < BackstopGrace+2*time.Second, "seen ending %v after the deadline", res.KillLate)
	assert.Check(t, res.RunQueueTasks > 0, "the supervisor read the program's threads before the kill")
	assert.Check(t, res.CPU > 0, "the loop's CPU, read before the kill, is counted: %v", res.CPU)
	assert.Check(t, is.Len(alive(tok), 0))
}

// TestReaperSlowTeardown: when the init has ended the run on time but
// the kernel takes long to kill the rest of its namespace (here its
// program is frozen, in a cgroup v1 freezer group of the test's, and
// thawed a second later), the backstop does not fire on an init that is
// already exiting: the Result says the init stopped the run, and how
// late the end came.
func TestReaperSlowTeardown(t *testing.T) {
	hardenedHere(t)
	const freezer = "/sys/fs/cgroup/freezer"
	_, err := os.Stat(filepath.Join(freezer, "cgroup.procs"))
	skip.If(t, err != nil || !HostRoot(), "needs root and the cgroup v1 freezer")
	tok := token(t)
	t.Cleanup(func() { killTagged(tok) })
	group := filepath.Join(freezer, "sandboxlab-test-"+tok)
	assert.NilError(t, os.Mkdir(group, 0o755))
	t.Cleanup(func() {
		os.WriteFile(filepath.Join(group, "freezer.state"), []byte("THAWED"), 0)
		for range 100 {
			if os.Remove(group) == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	thawed := make(chan error, 1)
	go func() { thawed <- freezeUntilInitExits(tok, group) }()
	res := runPy(t, testRoot(t), MustPreset(6), Command{}, "while True: pass", tok)
	assert.NilError(t, <-thawed)
	assert.Check(t, res.Reason == ReasonTimeout && res.TimedOut, "%s", res.Reason)
	assert.Check(t, is.Equal(res.StoppedBy, StoppedByInit))
	assert.Check(t, res.KillLate > BackstopGrace, "the end came %v after the deadline, with the program frozen past the backstop", res.KillLate)
	assert.Check(t, is.Len(alive(tok), 0))
}

// freezeUntilInitExits freezes the program tagged tok in the freezer
// group, waits until its init has begun to exit and the backstop's time
// has passed, and thaws it.
func freezeUntilInitExits(tok, group string) error {
	init, program := initOf(tok)
	if init == 0 {
		return errors.New("the init and its program were not seen")
	}
	if err := os.WriteFile(filepath.Join(group, "cgroup.procs"), []byte(fmt.Sprint(program)), 0); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(group, "freezer.state"), []byte("FROZEN"), 0); err != nil {
		return err
	}
	for end := time.Now().Add(10 * time.Second); !exiting(init); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			return errors.New("the init did not exit at its deadline")
		}
	}
	time.Sleep(BackstopGrace + 500*time.Millisecond)
	return os.WriteFile(filepath.Join(group, "freezer.state"), []byte("THAWED"), 0)
}

// TestReaperHashingThreads: the peer case that flaked, four threads
// hashing against the 2 s CPU limit at L6, with a core kept busy. As PID
// 1 the program ran on to the hard limit (3 s), which raced the 1.5 s
// wall clock on two cores; as PID 2 the soft limit stops it. Every run
// that reaches the soft limit must be reason cpu: a run is allowed to time
// out only short of it, when the machine did not give it 2 s of CPU
// within 1.5 s of wall time, and those are counted with their run-queue
// wait. "Short of it" has a margin (cpuMargin): the Result's CPU time
// takes in the init's own, and a run that reaches the limit just as the
// deadline comes may be stopped either way. With L6's equal CPU share a
// core kept busy leaves the run about one core, which is short of 2 s in
// 1.5 s (see the log).
func TestReaperHashingThreads(t *testing.T) {
	hardenedHere(t)
	skip.If(t, testing.Short(), "20 runs one after another")
	busyCore(t)
	root := testRoot(t)
	p := MustPreset(6)
	src := `
import hashlib, threading
data = b"x" * (1 << 20)
def work():
    while True:
        hashlib.sha256(data).digest()
for _ in range(4):
    threading.Thread(target=work).start()
`
	cpu, short := 0, 0
	var starved []string
	for i := range 20 {
		res := runPy(t, root, p, Command{}, src)
		switch {
		case res.Reason == ReasonCPU:
			assert.Check(t, is.Equal(res.Signal, "SIGXCPU"), "run %d", i)
			cpu++
		case res.Reason == ReasonTimeout && res.CPU < p.Limits.CPU+cpuMargin:
			short++
			starved = append(starved, fmt.Sprintf("%v CPU, %v waiting", res.CPU.Round(time.Millisecond), res.RunQueueWait.Round(time.Millisecond)))
		default:
			t.Errorf("run %d: %s (stopped by %q, %v late) after %v of CPU (%v wall): reached the soft limit, not stopped by it",
				i, res.Reason, res.StoppedBy, res.KillLate, res.CPU, res.Wall)
		}
	}
	t.Logf("%d of 20 stopped by the CPU limit, %d timed out short of it (%s); load %s", cpu, short, strings.Join(starved, "; "), loadavg())
}

// cpuMargin is how far past the soft CPU limit a timed-out run of
// TestReaperHashingThreads may have got: the init's own CPU time (about
// 50 ms on a loaded machine) and the 10 ms ticks of /proc's counts, with
// room. As PID 1 a run went on to the hard limit, a second past it.
const cpuMargin = 300 * time.Millisecond

// TestReaperRecords: the reaper's records travel whole, and one that is
// not well formed is refused, never taken for an end.
func TestReaperRecords(t *testing.T) {
	for _, e := range []initEnd{
		{Status: syscall.WaitStatus(7 << 8)},
		{Status: syscall.WaitStatus(syscall.SIGXCPU), CPU: 2*time.Second + 3*time.Millisecond},
		{Status: 0, CPU: 21 * time.Millisecond, Alone: true},
		{Deadline: true, At: 123456789012, RunQueueWait: 1500 * time.Millisecond, RunQueueTasks: 5, RunQueueWaitMax: 700 * time.Millisecond, CPU: 2 * time.Second},
	} {
		rec := boot.EndRecord(e)
		got, err := decodeInitRecord(rec.Encode())
		assert.NilError(t, err)
		assert.Check(t, is.DeepEqual(got, rec))
		end, err := initOutcome(rec.Encode(), nil, "/bin/true")
		assert.NilError(t, err)
		assert.Check(t, is.DeepEqual(*end, e))
	}
	good := boot.EndRecord(initEnd{Deadline: true}).Encode()
	for name, b := range map[string][]byte{
		"a step":   func() []byte { b := slices.Clone(good); b[6] = byte(StepExec); return b }(),
		"an errno": func() []byte { b := slices.Clone(good); b[boot.RecordErrno] = 1; return b }(),
		"short payload": func() []byte {
			b := slices.Clone(good[:len(good)-1])
			b[12] = byte(len(good) - recordHeader - 1)
			return b
		}(),
		"ended, the deadline's payload": func() []byte { b := slices.Clone(good); b[5] = byte(boot.ProgramEnded); return b }(),
		"ended, alone neither 0 nor 1": func() []byte {
			b := boot.EndRecord(initEnd{Alone: true}).Encode()
			b[len(b)-1] = 2
			return b
		}(),
	} {
		_, err := decodeInitRecord(b)
		assert.Check(t, is.ErrorIs(err, errInitReport), name)
	}
}

// TestReaperDeafToSignals: the program signals PID 1 every way it may,
// with every si_code the kernel lets it choose (the check
// init_ignores_signals's program), and tries to trace it; then it loops.
// The init lives on and ends the run at its deadline.
func TestReaperDeafToSignals(t *testing.T) {
	hardenedHere(t)
	src, err := os.ReadFile(filepath.Join("..", "checks", "programs", "signal_pid1.py"))
	assert.NilError(t, err)
	p := MustPreset(6)
	p.Limits.Wall = 3 * time.Second
	s, err := NewSession(Options{Policy: p, Root: testRoot(t)})
	assert.NilError(t, err)
	defer func() { assert.Check(t, s.Close()) }()
	loop := string(src) + "\nwhile True:\n    time.sleep(0.01)\n"
	res, err := s.Run(context.Background(), Command{Path: python, Args: []string{"-c", loop, "0"}})
	assert.NilError(t, err)
	assert.Check(t, is.Contains(res.Stdout, "delivered kill=64"), "stderr: %s", res.Stderr)
	assert.Check(t, !strings.Contains(res.Stdout, "rt_sigqueueinfo=0"), "no forged si_code reached PID 1: %s", res.Stdout)
	assert.Check(t, is.Equal(res.Reason, ReasonTimeout), "%s: %s", res.Message, res.Stderr)
	assert.Check(t, is.Equal(res.StoppedBy, StoppedByInit))
}

// TestInitLostIsItsOwnReason: an init killed from outside (SIGKILL, which
// nothing inside can send it) ends the run as init_lost, never with the
// init's status taken for the program's.
func TestInitLostIsItsOwnReason(t *testing.T) {
	hardenedHere(t)
	p := MustPreset(6)
	p.Limits.Wall, p.Watchdog = 20*time.Second, 20*time.Second
	s, err := NewSession(Options{Policy: p, Root: testRoot(t)})
	assert.NilError(t, err)
	defer func() { assert.Check(t, s.Close()) }()
	tok := token(t)
	go func() {
		if init, _ := initOf(tok); init != 0 {
			unix.Kill(init, unix.SIGKILL)
		}
	}()
	res, err := s.Run(context.Background(), Command{Path: python, Args: []string{"-c", "import time\ntime.sleep(15)", tok}})
	assert.NilError(t, err)
	assert.Check(t, is.Equal(res.Reason, ReasonInitLost))
	assert.Check(t, is.Equal(res.ExitCode, -1))
	assert.Check(t, is.Contains(res.Message, "the sandbox failed"))
	assert.Check(t, is.Contains(res.Message, "killed by SIGKILL"))
	assert.Check(t, res.Wall < 10*time.Second, "the run ended with its init: %v", res.Wall)
}
