package boot

import (
	"errors"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"sandboxlab/mutants"
)

// The init as the program's reaper (Processes.Reaper, L6).
//
// The init sets the run up as it always does, then, instead of becoming
// the program, forks it: the program is a child of the namespace's PID 1
// (its pid is the first the init's threads left free), and the init
// stays PID 1. It forwards the signals a program expects, reaps the
// orphans it adopts as they end, and holds the run's deadline itself, in
// one ppoll on the program's pidfd with the time left. When the deadline
// is up it simply exits: the kernel then kills every other process of the
// namespace, and the caller, however busy, has nothing to do but notice.
// It reports how the program ended (its wait status, or the deadline) in
// one record on the error pipe (see Record).
//
// Forking the program: Go cannot run its own code between fork and exec.
// A second re-exec of this binary as an "exec the program" stage would
// cost a whole Go start (the runtime and every package initialiser that
// sorts before this one) on every run; os/exec's fork cannot join a
// cgroup v1 group or set resource limits in the child. So the init clones
// itself as syscall's own forkAndExecInChild does, vfork-style (see
// cloneVM), and the child runs execPlan.run: nosplit code and raw system
// calls only, no allocation, every signal blocked from before the clone
// and every handler reset before they are unblocked for the exec. The
// per-thread layers (capabilities, no_new_privs, Landlock, the
// system-call filter, the keyring) are set on the init's thread by its
// set-up, as before, and the child inherits them; the child joins the
// run's control group (cgroup v1: the init stays out of it, and of its
// process cap) and sets the resource limits (they would bind the init
// too), then execs.

// ReaperInit is what the init needs to hold the run's deadline.
type ReaperInit struct {
	// Deadline is when the run's time is up, on CLOCK_MONOTONIC in ns,
	// counted from the caller's start of the run (0: no time limit).
	Deadline int64
	// Wall is true when Deadline is the wall clock's, which the watchdog
	// (Watchdog, 0: none) backs up: the no_wall_limit defect runs on to it.
	Wall     bool
	Watchdog int64
}

// errReported is returned when the record of a failure has been sent
// already (by the program's process, before its exec).
var errReported = errors.New("reported")

// reap runs the program as the init's child under plan, waits for its
// end or the deadline, and reports which. It returns nil once the end is
// reported, errReported when the child reported its own failure. sigs,
// when not nil, already gets the signals the init forwards (see
// catchSignals); otherwise the init catches them catchDelay into the run.
func reap(r *ReaperInit, plan *execPlan, sigs chan os.Signal) error {
	var wake [2]int
	if err := unix.Pipe2(wake[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return &initFailure{kind: InitExecFailed, step: StepExec, err: err}
	}
	plan.unignore = shieldSignals(sigs != nil)
	pid, pidfd, err := forkProgram(plan)
	if err != nil {
		return err
	}
	catch := func() { catchSignals(sigs) }
	if sigs != nil {
		catch = nil
	} else {
		sigs = make(chan os.Signal, 16)
	}
	for fd := CgroupTasksFD; fd < CgroupTasksFD+plan.groupFDs; fd++ {
		unix.Close(fd) // the child has joined: the init has no use for them
	}
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) // the program cannot read or write the init's memory
	hideConfig()
	go forward(sigs, pidfd, wake[1])
	end := waitProgram(r, pid, pidfd, wake[0], catch)
	if _, err := unix.Write(ErrFD, EndRecord(end).Encode()); err != nil {
		return errReported // nobody reads: the caller is gone
	}
	return nil
}

// catchSignals relays to sigs the signals the init forwards and SIGCHLD
// (an orphan it adopted has ended; ignoring SIGCHLD would have the kernel
// reap the orphans, but the program too, once it has exec'd, whatever its
// exit signal). The init is deaf to every other signal (shieldSignals).
// Signals are named one by one: enabling each costs a round trip to the
// runtime's signal-mask thread (about 0.5 ms here).
func catchSignals(sigs chan<- os.Signal) {
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGWINCH, unix.SIGCHLD)
}

// forwarded are the signals the init passes on to the program.
var forwarded = [...]syscall.Signal{unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGWINCH}

// shieldSignals makes the init deaf to every signal the program could
// send it, before the program exists, and returns the set it made
// ignored, which the program's process sets back to the default before
// its exec. From inside its namespace PID 1 gets only the signals it has
// a handler for, but Go's runtime has one for nearly every signal: it
// dies of SIGQUIT, SIGABRT, SIGSTKFLT, SIGILL, SIGTRAP or SIGSYS, and
// takes a SIGSEGV, SIGBUS or SIGFPE whose si_code is not SI_USER or
// SI_TKILL (rt_sigqueueinfo lets a sender choose any negative one) for a
// fault of its own, and panics. os/signal cannot ignore those: the
// kernel's handler table can, and the runtime never reinstalls a handler
// it installed at start. What is left handled is SIGCHLD and SIGURG,
// which the runtime only ever reads as a wake-up or a preemption request,
// and the forwarded signals, which reach the runtime as notifications
// whatever their si_code: caught already (caught), or ignored through
// os/signal until catchSignals, so that one sent before then ends
// nothing. A signal the init was started ignoring stays ignored for the
// program, as exec keeps it.
func shieldSignals(caught bool) (ignored uint64) {
	if mutants.On(mutants.InitSignalsOpen) {
		return 0 // the defect: the handlers Go installed stay
	}
	if !caught {
		signal.Ignore(forwarded[0], forwarded[1], forwarded[2], forwarded[3])
		for _, s := range forwarded {
			ignored |= 1 << (s - 1)
		}
	}
	ign := kernelSigaction{handler: 1} // SIG_IGN
	var old kernelSigaction
	for sig := 1; sig <= 64; sig++ {
		switch s := syscall.Signal(sig); {
		case s == unix.SIGKILL, s == unix.SIGSTOP, s == unix.SIGCHLD, s == unix.SIGURG, slices.Contains(forwarded[:], s):
			continue
		}
		_, _, errno := syscall.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&ign)), uintptr(unsafe.Pointer(&old)), 8, 0, 0)
		if errno == 0 && old.handler != 1 { // one ignored from the start stays so for the program
			ignored |= 1 << (sig - 1)
		}
	}
	return ignored
}

// hideConfig blanks the init's config in its argv, which the program
// could read in /proc/1/cmdline: the planted defect, in particular, must
// be gone once the program runs, as it is when the init execs it. Nothing
// of the config is used from here on (the plan holds copies, the defect
// switch the registry's id).
func hideConfig() {
	if len(os.Args) > 1 && len(os.Args[1]) > 0 {
		clear(unsafe.Slice(unsafe.StringData(os.Args[1]), len(os.Args[1])))
	}
}

// forward passes SIGTERM, SIGINT, SIGHUP and SIGWINCH on to the program
// (through its pidfd: never to a stranger), wakes the init's wait for
// SIGCHLD, and drops the rest.
func forward(sigs <-chan os.Signal, pidfd, wakeW int) {
	for s := range sigs {
		switch s {
		case unix.SIGCHLD:
			unix.Write(wakeW, []byte{0}) // full: a wake-up is pending anyway
		case unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGWINCH:
			unix.PidfdSendSignal(pidfd, s.(syscall.Signal), nil, 0)
		}
	}
}

// forkProgram clones the program's process, which runs plan, and returns
// once it has exec'd the program (CLONE_VFORK), with the child's pid and
// pidfd, or errReported when the child failed and sent its own record.
func forkProgram(plan *execPlan) (pid, pidfd int, err error) {
	var status [2]int
	if err := unix.Pipe2(status[:], unix.O_CLOEXEC); err != nil {
		return 0, 0, &initFailure{kind: InitExecFailed, step: StepExec, err: err}
	}
	plan.statusFD, plan.restoreMask, plan.resetHandlers = status[1], true, cloneVM != 0
	// The child is cloned from the thread that holds the per-thread
	// layers: the init runs on its first thread, to which Go keeps its
	// initialisers locked (see initMain).
	syscall.ForkLock.Lock()
	all := [1]uint64{^uint64(0)}
	syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&all[0])), uintptr(unsafe.Pointer(&plan.sigmask[0])), 8, 0, 0)
	var fd int32 = -1
	child, errno := plan.fork(&fd)
	syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&plan.sigmask[0])), 0, 8, 0, 0)
	syscall.ForkLock.Unlock()
	unix.Close(status[1])
	defer unix.Close(status[0])
	if errno != 0 {
		// As os/exec reports a failed fork: "fork/exec PATH: ERRNO".
		return 0, 0, &initFailure{kind: InitExecFailed, step: StepExec, err: errno}
	}
	// The child has exec'd (its end of the pipe closed with it) or failed
	// (and wrote a byte first): the read does not wait.
	var b [1]byte
	n, rerr := unix.Read(status[0], b[:])
	for rerr == unix.EINTR {
		n, rerr = unix.Read(status[0], b[:])
	}
	if n > 0 {
		unix.Wait4(child, nil, unix.WALL, nil)
		return 0, 0, errReported
	}
	return child, int(fd), nil
}

// fork clones the calling process; the child runs e and never returns.
// The parent gets the child's pid and, in *pidfd, its pidfd.
//
//go:nosplit
//go:norace
func (e *execPlan) fork(pidfd *int32) (int, syscall.Errno) {
	flags := uintptr(unix.SIGCHLD | unix.CLONE_VFORK | cloneVM | unix.CLONE_PIDFD)
	pid, errno := vforkSyscall(unix.SYS_CLONE, flags, 0, uintptr(unsafe.Pointer(pidfd)))
	if errno != 0 || pid != 0 {
		return int(pid), syscall.Errno(errno)
	}
	e.run()
	return 0, 0
}

// catchDelay is how long into the program's run the init begins to catch
// signals (see catchSignals): enabling them costs about 3 ms of wall time
// here, which a program that is done by then does not pay. A signal sent
// to the init before then ends it, and so the run, as it would have ended
// the program; an orphan that ends before then is reaped at the next
// wake-up, at the latest then.
const catchDelay = 10 * time.Millisecond

// waitProgram waits until the program (pid, pidfd) ends or the deadline
// is up, reaping every child meanwhile (forward wakes it through wakeR),
// and says which. It calls catch (if not nil) once, catchDelay into the
// wait.
func waitProgram(r *ReaperInit, pid, pidfd, wakeR int, catch func()) End {
	deadline, catchAt := r.Deadline, MonotonicNow()+int64(catchDelay)
	if catch == nil {
		catchAt = 0
	}
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}, {Fd: int32(wakeR), Events: unix.POLLIN}}
	var drain [64]byte
	var reaped time.Duration // the CPU time of every process reaped
	for {
		if ws, ok, alone := reapChildren(pid, &reaped); ok {
			return End{Status: ws, CPU: reaped, Alone: alone}
		}
		now := MonotonicNow()
		if deadline > 0 && now >= deadline {
			if mutants.On(mutants.InitNoDeadline) {
				// The defect: the init does not act on its deadline; the
				// supervisor's backstop alone ends the run. Asked only
				// once the deadline is up, where it changes what the init
				// does, so that the harness's coverage counts only runs it
				// can matter to.
				deadline = 0
				continue
			}
			if r.Wall && mutants.On(mutants.NoWallLimit) {
				// The defect: the wall clock is not armed; only the
				// watchdog bounds the run (asked only once the wall
				// clock is up, as the caller's supervisor does).
				r.Wall, deadline = false, r.Watchdog
				continue
			}
			u := ReadUsage(namespaceProgram())
			return End{Deadline: true, At: now, RunQueueWait: u.RunQueue, RunQueueTasks: u.Tasks, RunQueueWaitMax: u.MaxRunQueue, CPU: u.CPU}
		}
		if catchAt > 0 && now >= catchAt {
			catch()
			catchAt = 0
			continue
		}
		unix.Ppoll(fds, timeLeft(now, deadline, catchAt), nil) // EINTR: look again
		for {
			if n, _ := unix.Read(wakeR, drain[:]); n <= 0 {
				break
			}
		}
	}
}

// timeLeft is the time from now to the earliest of times (CLOCK_MONOTONIC
// in ns; 0: none), for ppoll; nil when there is none.
func timeLeft(now int64, times ...int64) *unix.Timespec {
	var first int64
	for _, t := range times {
		if t > 0 && (first == 0 || t < first) {
			first = t
		}
	}
	if first == 0 {
		return nil
	}
	ts := unix.NsecToTimespec(max(first-now, 0))
	return &ts
}

// reapChildren reaps every child that has ended, adding their CPU time
// to cpu, and returns the program's wait status if it was among them,
// and whether the init then has no child left: an orphan is the init's
// child, so none left means the namespace holds the init alone.
func reapChildren(program int, cpu *time.Duration) (ws syscall.WaitStatus, found, alone bool) {
	for {
		var status unix.WaitStatus
		var ru unix.Rusage
		pid, err := unix.Wait4(-1, &status, unix.WNOHANG|unix.WALL, &ru)
		if err == unix.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return ws, found, err == unix.ECHILD
		}
		*cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		if pid == program {
			ws, found = syscall.WaitStatus(status), true
		}
	}
}

// MonotonicNow is CLOCK_MONOTONIC in ns, the clock the caller's deadline
// is given on (the same in every process: no time namespace is made).
func MonotonicNow() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// namespaceProgram lists the processes of the init's namespace but the
// init: the program and everything below it or adopted.
func namespaceProgram() []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	var pids []int
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil && pid != 1 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// maxUsageTasks bounds the threads ReadUsage reads, so that a program
// with very many cannot stretch the reading (and, in the init, the kill
// that follows it) without limit.
const maxUsageTasks = 1024

// Usage is what the kernel counts of the live processes of a program,
// read at a stop, before the kill.
type Usage struct {
	// runQueue sums, over every thread of the processes, the time the
	// thread has spent runnable but waiting for a CPU since it started:
	// the second field of /proc/PID/task/TID/schedstat (run_delay, ns).
	// Threads that have ended are not counted (their wait is lost with
	// them), nor any past maxUsageTasks; tasks counts those read.
	RunQueue time.Duration
	Tasks    int
	// maxRunQueue is the longest of those waits: the one thread that was
	// kept from a CPU most, which a mean over threads that slept (a fork
	// bomb's children beside its parent) would hide.
	MaxRunQueue time.Duration
	// cpu sums each process's user and system time and its reaped
	// children's (/proc/PID/stat), which the kill would otherwise lose:
	// a process killed with its namespace is reaped by the kernel, and
	// counted in no one's rusage.
	CPU time.Duration
}

// ReadUsage reads the Usage of the processes pids.
func ReadUsage(pids []int) Usage {
	var u Usage
	var buf [512]byte
	for _, pid := range pids {
		dir := "/proc/" + strconv.Itoa(pid)
		if b, ok := ReadSmallFile(dir+"/stat", buf[:]); ok {
			u.CPU += statCPU(b)
		}
		d, err := os.Open(dir + "/task")
		if err != nil {
			continue
		}
		tids, _ := d.Readdirnames(-1)
		d.Close()
		for _, tid := range tids {
			if u.Tasks >= maxUsageTasks {
				break
			}
			if b, ok := ReadSmallFile(dir+"/task/"+tid+"/schedstat", buf[:]); ok {
				// "on-CPU-ns run-queue-wait-ns timeslices"
				if f := strings.Fields(string(b)); len(f) >= 2 {
					if ns, err := strconv.ParseInt(f[1], 10, 64); err == nil {
						u.RunQueue += time.Duration(ns)
						u.MaxRunQueue = max(u.MaxRunQueue, time.Duration(ns))
						u.Tasks++
					}
				}
			}
		}
	}
	return u
}

// statCPU is utime+stime+cutime+cstime from the text of /proc/PID/stat
// (fields 14 to 17, counted after the command name, which may hold
// spaces and parentheses), 0 if it cannot be read.
func statCPU(b []byte) time.Duration {
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3, the state
	if len(f) < 15 {
		return 0
	}
	var ticks int64
	for _, s := range f[11:15] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ
}

// userHZ is the unit of the times in /proc/PID/stat (USER_HZ, 100 on
// every Linux architecture Go supports).
const userHZ = 100

// ReadSmallFile reads a /proc file of at most len(buf) bytes.
func ReadSmallFile(path string, buf []byte) ([]byte, bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	n, err := unix.Read(fd, buf)
	unix.Close(fd)
	if err != nil || n <= 0 {
		return nil, false
	}
	return buf[:n], true
}
