package sandbox

import (
	"context"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/mutants"
	"sandboxlab/sandbox/child"
	"sandboxlab/sandbox/procfs"
)

// BackstopGrace is how long after the run's deadline the caller's
// supervisor waits for a reaper (Processes.Reaper) to end the run before
// it kills the init itself (Result.StoppedBy "backstop"): the init wakes
// at its deadline in the kernel's own time, so on time it is well inside.
const BackstopGrace = 250 * time.Millisecond

// cancelGrace is how long a reaper's program has to end after the
// SIGTERM a cancelled run sends it, before the run is killed.
const cancelGrace = time.Second

// supervisor watches one running program: the wall clock, the watchdog,
// the process cap and the caller's context. When one of them fires it
// kills the run and records why; the reason is read after done is closed.
//
// Under a reaper (Processes.Reaper) proc is the init, which holds the
// deadline itself: the supervisor's clock is then a backstop, grace later.
type supervisor struct {
	// proc is the program's first process, held unreaped until the
	// supervisor has stopped: "has it ended?" never asks about a reused
	// pid, and no kill reaches one.
	proc     *child.Process
	killTree bool
	deadline time.Duration // 0: no time limit at all
	// wall is true when deadline is the wall clock, which the watchdog
	// (0: none) backs up later.
	wall     bool
	watchdog time.Duration
	maxProcs int // 0: no monitor
	interval time.Duration
	reaper   bool
	grace    time.Duration // added to deadline and watchdog

	reason  Reason // why the supervisor stopped the run ("" if it did not)
	stopper string // who carried the stop out (Result.StoppedBy)
	// used is what the kernel counted of the program, read before a
	// timeout's kill (see usage).
	used    usage
	stopped chan struct{}
	done    chan struct{}
}

func (s *supervisor) start(ctx context.Context) {
	s.stopped = make(chan struct{})
	s.done = make(chan struct{})
	go s.loop(ctx)
}

// stop tells the supervisor that the program has ended and waits for it,
// and for a kill it had begun.
func (s *supervisor) stop() {
	close(s.stopped)
	<-s.done
}

// loop arms the timer and the monitor's ticker and kills the run if one
// of them, or ctx, fires before the program ends.
func (s *supervisor) loop(ctx context.Context) {
	defer close(s.done)
	var timer *time.Timer
	var timeout, tick <-chan time.Time // nil: never ready
	if s.deadline > 0 {
		timer = time.NewTimer(s.deadline + s.grace)
		defer timer.Stop()
		timeout = timer.C
	}
	if s.maxProcs > 0 {
		t := time.NewTicker(s.interval)
		defer t.Stop()
		tick = t.C
	}
	if why := s.wait(ctx, timer, timeout, tick); why != "" {
		s.kill(why)
	}
}

// wait returns why to stop the run, or "" once the program has ended.
func (s *supervisor) wait(ctx context.Context, timer *time.Timer, timeout, tick <-chan time.Time) Reason {
	for {
		select {
		case <-s.stopped:
			return ""
		case <-timeout:
			if s.ended() {
				return ""
			}
			if s.reaper && exiting(s.proc.PID()) {
				// The init has ended the run and is waiting for the
				// kernel to kill the rest of its namespace, which a
				// loaded machine can take a while to schedule: killing
				// it would change nothing but the Result's word.
				timer.Reset(s.grace)
				continue
			}
			if s.wall && mutants.On(mutants.NoWallLimit) {
				// The defect: the wall clock is not armed, only the
				// watchdog bounds the run (asked only once the wall
				// clock is up, the only time it makes a difference).
				s.wall, timeout = false, nil
				if s.watchdog > s.deadline {
					timer.Reset(s.watchdog - s.deadline)
					timeout = timer.C
				}
				continue
			}
			return ReasonTimeout
		case <-ctx.Done():
			return ReasonSignal
		case <-tick:
			if s.count() > s.maxProcs && !s.ended() {
				return ReasonProcesses
			}
		}
	}
}

// ended reports whether the program has already ended, though its parent
// has not yet reaped it. On a starved machine the harness may see the
// exit late: a program that finished in time was not stopped, and its
// Result must say how it ended, not that a limit fired afterwards.
func (s *supervisor) ended() bool { return s.proc.Exited() }

// exiting reports whether process pid has begun to exit (PF_EXITING in
// the flags of /proc/PID/stat, its ninth field): the init of a PID
// namespace stays so until the kernel has killed and reaped every other
// process in it.
func exiting(pid int) bool {
	b, ok := readSmallFile("/proc/"+strconv.Itoa(pid)+"/stat", make([]byte, 512))
	if !ok {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3, the state
	if len(f) < 7 {
		return false
	}
	flags, err := strconv.ParseUint(f[6], 10, 64)
	return err == nil && flags&pfExiting != 0
}

// pfExiting is the kernel's PF_EXITING task flag.
const pfExiting = 0x4

// kill stops the run for why. A timeout's kill is preceded by a reading
// of the run's wait for a CPU. Under a reaper, a cancelled run's program
// first gets SIGTERM (through the init, which forwards it) and
// cancelGrace to end, and a timeout here is the backstop's: the init did
// not end the run in time.
func (s *supervisor) kill(why Reason) {
	s.reason, s.stopper = why, StoppedBySupervisor
	if why == ReasonSignal && s.reaper {
		s.proc.Signal(unix.SIGTERM)
		select {
		case <-s.stopped:
			return
		case <-time.After(cancelGrace):
		}
	}
	if why == ReasonTimeout {
		s.used = readUsage(s.programPIDs())
		if s.reaper {
			s.stopper = StoppedByBackstop
		}
	}
	// A reaper's kill ends its namespace, so the tree kill finds nothing
	// of it left; the run's control group, if any, is emptied as it is
	// removed right after (runGroup.finish).
	killRun(s.proc, s.killTree && !mutants.On(mutants.KillLeaderOnly))
}

// programPIDs lists the live processes of the program: its first process
// and everything below it, less a reaper, which is not the program's.
func (s *supervisor) programPIDs() []int {
	var pids []int
	if !s.reaper {
		pids = append(pids, s.proc.PID())
	}
	for _, p := range s.tree() {
		if p.Alive() {
			pids = append(pids, p.PID)
		}
	}
	return pids
}

// count returns how many processes of the run are alive: the program and
// everything below it. In a PID namespace that is the whole namespace,
// since orphans there are adopted by its PID 1 (the program, or the
// reaper, which is not counted). It walks the run's own tree, not the
// host's whole process table.
func (s *supervisor) count() int {
	n := 1
	if s.reaper {
		n = 0
	}
	for _, p := range s.tree() {
		if p.Alive() {
			n++
		}
	}
	return n
}

// tree returns the processes below the run's first process. Below a
// reaper it reads the children of the init's first thread alone, not of
// its every thread as procfs.Tree does: the init forks the program there,
// and the kernel hands orphans to that thread (the namespace's reaper), so
// the list holds them all, and the monitor, which looks every few
// milliseconds, reads one file where it would read one per thread of the
// init's runtime (and leave /proc entries the kernel must sweep when the
// init is reaped).
func (s *supervisor) tree() []procfs.Proc {
	pid := s.proc.PID()
	if !s.reaper {
		return procfs.Tree(pid)
	}
	b, ok := readSmallFile("/proc/"+strconv.Itoa(pid)+"/task/"+strconv.Itoa(pid)+"/children", make([]byte, 4096))
	if !ok {
		return nil
	}
	var out []procfs.Proc
	for _, f := range strings.Fields(string(b)) {
		child, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		if p, err := procfs.Stat(child); err == nil {
			out = append(append(out, p), procfs.Tree(child)...)
		}
	}
	return out
}

// killRun kills a run led by proc. With tree set it kills the process,
// its process group, its descendants and every process of its session,
// and waits until they are dead; otherwise only the process. The program
// runs as session leader, so its pid is also its session and group id.
//
// Only the leader is signalled through its pidfd; the rest are found by
// number (the group id, the session id in /proc) and so are killed only
// while proc is held unreaped: then those numbers name this run alone,
// and a process that /proc lists with them is the run's (see
// child.Process). Once the leader is reaped, nothing is killed by number.
func killRun(proc *child.Process, tree bool) {
	proc.Signal(unix.SIGKILL)
	if tree {
		proc.Held(killTree)
	}
}

// killTree kills the members of the run led by pid, which its caller
// holds unreaped, and waits until they are dead.
func killTree(pid int) {
	// The whole group at once (the kernel signals it under one lock, so
	// no fork slips through), then what left the group.
	unix.Kill(-pid, unix.SIGKILL)
	var k procfs.Killer
	// A killed process cannot fork any more (fork fails with a fatal
	// signal pending), so each pass can only find children forked before
	// the previous one; a few passes reach a fixed point.
	for range 100 {
		if killPass(&k, pid) == 0 {
			break
		}
	}
	k.Wait(2 * time.Second)
}

// killPass kills the live members of the run led by pid that one scan of
// /proc finds, and returns how many it found (0 when /proc cannot be read).
func killPass(k *procfs.Killer, pid int) int {
	procs, err := procfs.Scan()
	if err != nil {
		return 0
	}
	found := 0
	for _, p := range runMembers(procs, pid) {
		if k.KillProc(p) {
			found++
		}
	}
	return found
}

// hasLeftovers reports whether any process of the run led by pid is
// still alive (after the leader has ended: what a sweep would kill).
func hasLeftovers(pid int) bool {
	procs, err := procfs.Scan()
	return err != nil || len(runMembers(procs, pid)) > 0
}

// runMembers returns the live processes that belong to the run led by pid.
func runMembers(procs []procfs.Proc, pid int) []procfs.Proc {
	self := os.Getpid()
	seen := map[int]bool{}
	var out []procfs.Proc
	add := func(p procfs.Proc) {
		if p.Alive() && p.PID != self && !seen[p.PID] {
			seen[p.PID] = true
			out = append(out, p)
		}
	}
	for _, p := range procs {
		if p.SID == pid || p.PGID == pid {
			add(p)
		}
	}
	for _, p := range procfs.Descendants(procs, pid) {
		add(p)
	}
	return out
}
