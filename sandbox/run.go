package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/mutants"
	"sandboxlab/sandbox/boot"
	"sandboxlab/sandbox/cgroup"
	"sandboxlab/sandbox/child"
	"sandboxlab/sandbox/cleanup"
	"sandboxlab/sandbox/egress"
	"sandboxlab/sandbox/landlock"
	"sandboxlab/sandbox/reexec"
)

// Command is the program to run.
type Command struct {
	// Path is the program's absolute path on the host.
	Path string
	// Args are its arguments, not counting the program name.
	Args []string
	// Env is the environment the caller would give a child process, as
	// key=value pairs; nil means os.Environ(). From L2 up only LANG
	// survives from it; PATH is a fixed system path and HOME and TMPDIR
	// point into the session directory.
	Env []string
	// Dir is the application's directory: the program's working directory
	// when Workspace.Private is off (L0, L1). Empty means the caller's,
	// which the program's identity (65534 when the caller is root) may not
	// be able to enter.
	Dir string
}

// Run runs one program under policy in a session of its own and closes
// the session afterwards.
func Run(ctx context.Context, policy Policy, cmd Command) (*Result, error) {
	s, err := NewSession(Options{Policy: policy})
	if err != nil {
		return nil, err
	}
	res, err := s.Run(ctx, cmd)
	if cerr := s.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return res, err
}

// streamGrace is how long output is still read after the run has ended.
// A detached process that kept the pipe open cannot hold the run past it.
const streamGrace = 250 * time.Millisecond

// run runs cmd under p with the session directory dir: on w, a
// pre-started init made for it, when there is one (see warm.go), or else
// from a cold start.
//
// settle is nil unless the Result was made before the run's init had
// exited (runStart.early): it waits for that, and must be called before
// the session's next run and before it closes.
func run(ctx context.Context, p Policy, q Queue, c Command, dir string, w *warmInit) (res *Result, settle func() error, err error) {
	cwd, err := checkCommand(p, c, dir)
	if err != nil {
		w.discard()
		return nil, nil, err
	}
	release, queued, err := takeSlot(ctx, q)
	if errors.Is(err, errBusy) {
		w.discard()
		return &Result{Level: p.Level, Reason: ReasonBusy, ExitCode: -1, Queued: queued,
			Message: "the machine is busy: " + err.Error() + "; nothing ran, try again"}, nil, nil
	}
	if err != nil {
		w.discard()
		return nil, nil, fmt.Errorf("waiting to run %s: %w", c.Path, err)
	}
	defer release()
	o, warm := w.run(ctx, p, c, dir)
	if !warm {
		if o, err = runCold(ctx, p, c, cwd, dir); err != nil {
			return nil, nil, err
		}
	}
	res, err = newResult(p, c, o)
	if res != nil {
		res.Queued, res.Prestarted = queued, warm
	}
	markDisk(p, dir, res)
	if err == nil && o.stoppedBy == ReasonSignal {
		return res, o.settle, ctx.Err() // the caller cancelled the run
	}
	return res, o.settle, err
}

// liveRun is one run's state from its set-up to its end: what it runs
// under (p, c, cwd, dir), what the host made for it (its pipes, control
// group and way to the egress proxy), and once started, its init and
// how it is watched. A cold run makes all of it (runCold); a pre-started
// init brings its own (warmInit.run).
type liveRun struct {
	p        Policy
	c        Command
	cwd, dir string
	ps       *pipes
	rg       *runGroup    // nil without a control group
	eg       *egressRelay // nil without an egress proxy
	cmd      *exec.Cmd    // the init (or the program, without one), once started
	rs       runStart
}

// runCold makes everything c's run under p needs, starts it and
// supervises it.
func runCold(ctx context.Context, p Policy, c Command, cwd, dir string) (outcome, error) {
	r := &liveRun{p: p, c: c, cwd: cwd, dir: dir}
	var cu cleanup.Stack
	defer cu.Clean()
	if err := r.prepare(&cu); err != nil {
		return outcome{}, err
	}
	if err := r.start(); err != nil {
		return outcome{}, err
	}
	cu.Release() // supervise closes the parent's ends and removes the group
	o := r.supervise(ctx)
	o.network, o.networkDropped = r.eg.finish() // the program is gone: so is its way out
	return o, nil
}

// prepare makes the run's pipes, control group and egress proxy, and
// checks the session's store, adding to cu how to undo each.
func (r *liveRun) prepare(cu *cleanup.Stack) error {
	var err error
	if r.ps, err = newPipes(); err != nil {
		return fmt.Errorf("creating output pipes: %w", err)
	}
	cu.Add(r.ps.close)
	if r.rg, err = newRunGroup(r.p); err != nil {
		return err
	}
	if r.rg != nil {
		cu.Add(r.rg.discard)
	}
	if err := checkSessionStore(r.p, r.dir); err != nil {
		return err
	}
	if r.eg, err = newEgress(r.p); err != nil {
		return err
	}
	if r.eg != nil {
		cu.Add(r.eg.discard)
	}
	return nil
}

// checkCommand checks c against p and returns its working directory.
func checkCommand(p Policy, c Command, dir string) (string, error) {
	if !filepath.IsAbs(c.Path) {
		return "", fmt.Errorf("program %q: want an absolute path", c.Path)
	}
	cwd, err := workDir(p, c, dir)
	if err != nil {
		return "", err
	}
	for i, h := range p.Filesystem.Hide {
		if within(cwd, filepath.Clean(h)) {
			return "", invalid(fmt.Sprintf("Filesystem.Hide[%d]", i), "%s holds the working directory %s", h, cwd)
		}
	}
	return cwd, nil
}

// runStart is when a run started and how its program is watched.
type runStart struct {
	// at is the start of the run's clock: the wall time and the deadline
	// (the caller's and the reaper's alike) count from it.
	at time.Time
	// reaper is true when the init stays as the program's reaper
	// (Processes.Reaper in a PID namespace of its own): it holds the
	// deadline, and the supervisor's clock is the backstop.
	reaper bool
	// mono is the start on CLOCK_MONOTONIC (ns), from which the reaper's
	// deadline counts.
	mono int64
	// early lets the Result be made at the reaper's report that the
	// program ended and the namespace holds nothing else, before the init
	// has exited (outcome.settle), where a session will settle the run
	// before its next one and before it closes (see settleEarly).
	early bool
	// started is when the init's exec had succeeded (exec.Cmd.Start
	// returns after it).
	started time.Time
}

// start builds the command and starts it (in the run's control group,
// when the policy asks for one; with its way to the egress proxy, when
// it asks for one), and notes when it started. The child's ends of the
// pipes are closed right after, whatever the outcome.
func (r *liveRun) start() error {
	// The clock starts before the command is built, because the reaper's
	// deadline, which is part of its config, counts from it.
	r.rs = runStart{at: time.Now(), mono: monotonicNow()}
	cmd, reaper, err := r.buildCmd()
	if err != nil {
		return err
	}
	r.rs.reaper = reaper
	err = cmd.Start()
	if err != nil && r.p.userNS() && mutants.On(mutants.FailOpen) {
		cmd, err = r.startBare(err)
		r.rs.reaper = false
	}
	r.rs.started = time.Now()
	r.ps.closeChildEnds()
	if r.rg != nil {
		r.rg.started()
	}
	if err != nil {
		return startError(r.p, r.c, err)
	}
	r.cmd = cmd
	r.eg.started()
	return nil
}

// startError says why the program did not start. Where the policy needs
// namespaces, what starts is this binary as the init (a missing program
// is the init's to report), so a failure is the kernel refusing the
// namespaces: the sandbox fails closed.
func startError(p Policy, c Command, err error) error {
	if p.userNS() {
		return fmt.Errorf("%w: creating namespaces: %w%s", ErrUnavailable, err, nsHint(err))
	}
	return fmt.Errorf("starting %s: %w", c.Path, err)
}

// outcome is what supervising a run found out.
type outcome struct {
	state     *os.ProcessState // nil if Wait failed
	waitErr   error
	wall      time.Duration
	stoppedBy Reason // "" when the program ended by itself
	// initReport is the init's record of a failure, or the reaper's of
	// the program's end (empty when the init exec'd the program or there
	// was no init), and initReadErr why it could not be read.
	initReport  []byte
	initReadErr error
	// reaper says the init stayed as the program's reaper; stopper is
	// what carried out a stop (Result.StoppedBy), and used what was read
	// of the program before a timeout's kill (see usage).
	reaper         bool
	stopper        string
	used           usage
	startMono      int64         // runStart.mono
	initSetup      time.Duration // Result.InitSetup
	initLost       bool          // the reaper ended without its report (ReasonInitLost)
	stdout, stderr *stream
	// group is what the kernel counted in the run's control group
	// (nil without one); groupErr says why it could not be read or
	// removed. (An init that could not join the group says so itself.)
	group    *cgroup.Stats
	groupErr error
	// network is the egress proxy's log (nil without one), and
	// networkDropped the requests past its limit.
	network        []egress.Request
	networkDropped int
	// settle, when the Result was made early (runStart.early), waits
	// until the init has exited and been reaped and the group is removed,
	// and says why the group could not be; nil otherwise.
	settle func() error
}

// supervise reads the program's output, enforces the limits the
// supervisor watches, waits for the program and sweeps up after it. It
// closes the parent's ends of the pipes and removes the control group.
//
// The program's first process is reaped only after the supervisor has
// stopped and the sweep is done: until then its pid, group id and
// session id cannot be given to another process, so nothing they kill by
// number can be a stranger's (see killRun).
func (r *liveRun) supervise(ctx context.Context) outcome {
	p, cmd, ps, rg, rs := r.p, r.cmd, r.ps, r.rg, r.rs
	o := outcome{stdout: newStream(p.Limits.OutputChars), stderr: newStream(p.Limits.OutputChars), reaper: rs.reaper,
		startMono: rs.mono}
	var readers child.Readers
	readers.Read(ps.outR, o.stdout)
	readers.Read(ps.errR, o.stderr)
	proc := child.Hold(cmd.Process.Pid)
	proc.StopIsEnd = func() bool { return mutants.On(mutants.TraceStopEnded) }
	sup := startSupervisor(ctx, p, proc, rs.reaper, rg.capsProcesses(p.Processes.Max))
	stopped := false
	if rs.early {
		var eof bool
		o.initReport, eof, o.initReadErr = ps.initRecord()
		if o.initReadErr == nil && endedAlone(o.initReport) {
			o.wall = time.Since(rs.at)
			sup.stop()
			if sup.reason == "" {
				return r.settleEarly(o, proc, &readers)
			}
			stopped = true // the supervisor stopped the init meanwhile: as below
		}
		if !eof && o.initReadErr == nil {
			var rest []byte
			rest, o.initReadErr = ps.initReport()
			o.initReport = append(o.initReport, rest...)
		}
	} else {
		o.initReport, o.initReadErr = ps.initReport() // to EOF before the wait
		if ps.initR != nil && len(o.initReport) == 0 && o.initReadErr == nil {
			// The pipe is close-on-exec: its end is the program's exec.
			o.initSetup = time.Since(rs.started)
		}
	}
	proc.WaitExit()
	if !stopped {
		o.wall = time.Since(rs.at)
		sup.stop()
	}
	o.stoppedBy, o.stopper = sup.reason, sup.stopper
	o.used = sup.used
	if p.Limits.Sweep && sup.reason == "" && !ownPIDNamespace(cmd) {
		proc.Held(sweep)
	}
	o.waitErr = proc.Reap(cmd.Wait)
	if reapedHook != nil {
		reapedHook(cmd.Process.Pid)
	}
	readers.Drain(streamGrace)
	ps.closeParentEnds()
	o.state = cmd.ProcessState
	if rg != nil {
		st, err := rg.finish()
		o.group, o.groupErr = &st, err
	}
	return o
}

// settleEarly makes the outcome of a run whose reaper reported that the
// program ended and that it was alone in its namespace: nothing of the
// run is left but the init, which exits on its own, and its exit (a Go
// process's, with its namespaces: 2 to 3 ms here) need not be waited
// for. The pipes hold all the program wrote, since the init, their last
// writer, writes nothing; the run's control group holds nothing, since
// the init never joined it, and what the kernel counted there is final.
// The rest is left to o.settle: reaping the init, which a backstop
// bounds (an init that has not exited settleGrace after its report is
// killed), and removing the group.
func (r *liveRun) settleEarly(o outcome, proc *child.Process, readers *child.Readers) outcome {
	cmd, ps, rg := r.cmd, r.ps, r.rg
	readers.Collect()
	if rg != nil {
		st, err := rg.g.Stats()
		o.group, o.groupErr = &st, err
	}
	done := make(chan error, 1)
	go func() {
		backstop := time.AfterFunc(settleGrace, func() { proc.Signal(unix.SIGKILL) })
		proc.WaitExit()
		backstop.Stop()
		proc.Reap(cmd.Wait)
		if reapedHook != nil {
			reapedHook(cmd.Process.Pid)
		}
		ps.closeParentEnds()
		var err error
		if rg != nil {
			err = rg.g.Close()
		}
		done <- err
	}()
	o.settle = func() error { return <-done }
	return o
}

// settleGrace is how long an init has to exit after reporting that its
// program ended alone, before the settling kills it.
const settleGrace = 2 * time.Second

// endedAlone reports whether report is the reaper's record of a program
// that ended by itself with nothing else left in its namespace.
func endedAlone(report []byte) bool {
	r, err := decodeInitRecord(report)
	return err == nil && r.Kind == boot.ProgramEnded && r.End.Alone
}

// reapedHook, when set (by a test), is called with the program's pid
// right after it has been reaped: from then on the pid may be another
// process's.
var reapedHook func(pid int)

// sweep kills what is left of the run led by pid after a normal end: a
// stopped run was killed by the supervisor. In a PID namespace of its own
// the kernel has swept already (its caller does not ask): when the
// program, its PID 1, ended, it killed every other process of the
// namespace, and the program's exit was reported only once they were all
// gone. The defect's site is asked only when there is something to sweep.
func sweep(pid int) {
	if hasLeftovers(pid) && !mutants.On(mutants.NoSweep) {
		killTree(pid)
	}
}

// ownPIDNamespace reports whether cmd was started in a PID namespace of
// its own (not so under the no_pid_ns defect, or when fail_open fell back
// to a bare start).
func ownPIDNamespace(cmd *exec.Cmd) bool {
	return cmd.SysProcAttr != nil && cmd.SysProcAttr.Cloneflags&syscall.CLONE_NEWPID != 0
}

// startSupervisor starts watching the program proc under p; with reaper,
// proc is the init that reaps it, and the deadline is the init's to hold.
// capped says the kernel already holds the run under the process cap (see
// runGroup.capsProcesses): the monitor is then not started. It would never
// fire, and its reads of /proc every few ms slowed the program's start
// (Python's by about 1 ms here).
func startSupervisor(ctx context.Context, p Policy, proc *child.Process, reaper, capped bool) *supervisor {
	sup := &supervisor{proc: proc, killTree: p.Limits.KillTree, deadline: p.TimeLimit(), reaper: reaper}
	if reaper {
		sup.grace = BackstopGrace
	}
	if w := p.Limits.Wall; w > 0 && w == sup.deadline && w != p.Watchdog {
		sup.wall, sup.watchdog = true, p.Watchdog
	}
	// The defect's site is asked first, as it was before the kernel's
	// cap was: a probe's coverage does not depend on the group.
	if p.Processes.Max > 0 && !mutants.On(mutants.NprocRlimitOnly) && !capped {
		sup.maxProcs, sup.interval = p.Processes.Max, p.Processes.Interval
	}
	sup.start(ctx)
	return sup
}

// newResult builds the Result of a supervised run, or the error that
// kept it from taking place.
func newResult(p Policy, c Command, o outcome) (*Result, error) {
	end, err := initOutcome(o.initReport, o.initReadErr, c.Path)
	if err != nil {
		return nil, err
	}
	if o.state == nil && o.settle == nil {
		return nil, fmt.Errorf("waiting for %s: %w", c.Path, o.waitErr)
	}
	res := &Result{Level: p.Level, Wall: o.wall}
	res.Stdout, res.StdoutTruncated = o.stdout.result()
	res.Stderr, res.StderrTruncated = o.stderr.result()
	res.StdoutBytes, res.StderrBytes = o.stdout.total, o.stderr.total
	var ws syscall.WaitStatus
	if o.state != nil { // the init's, or the program's own without one
		res.CPU = o.state.UserTime() + o.state.SystemTime()
		ws = o.state.Sys().(syscall.WaitStatus)
	}
	if o.reaper {
		ws = reapedStatus(res, &o, end, ws)
	}
	setStatus(res, ws)
	if o.group != nil {
		setKernelCounts(res, p, *o.group)
	}
	res.Reason = classify(p, o.stoppedBy, ws, res)
	if o.initLost {
		// The init's status is not the program's: never report it as such.
		res.Reason, res.ExitCode, res.Signal = ReasonInitLost, -1, ""
	}
	res.InitSetup = o.initSetup
	res.TimedOut = o.stoppedBy == ReasonTimeout && !mutants.On(mutants.TimeoutHidden)
	if o.stoppedBy != "" {
		res.StoppedBy = o.stopper
	}
	if res.Reason == ReasonTimeout {
		res.KillLate = o.wall - p.TimeLimit()
		if end != nil && end.Deadline && res.StoppedBy == StoppedByInit {
			res.InitLate = time.Duration(end.At - o.startMono - int64(p.TimeLimit()))
		}
		res.RunQueueWait, res.RunQueueTasks, res.RunQueueWaitMax = o.used.RunQueue, o.used.Tasks, o.used.MaxRunQueue
		res.Starved = starved(o.used, p.TimeLimit())
	}
	res.Network, res.NetworkDropped = o.network, o.networkDropped
	return res, nil
}

// killedByNamespace is the wait status of a program killed as its PID
// namespace ended: the kernel sends SIGKILL.
const killedByNamespace = syscall.WaitStatus(syscall.SIGKILL)

// reapedStatus is the program's wait status under a reaper (ws is the
// init's): as the init reported it, or SIGKILL when the run ended with
// the namespace (at the init's deadline, or by the supervisor's kill of
// the init). A stop at the init's deadline is recorded in o. An init
// that ended unreported otherwise (killed by someone else, or crashed) is
// said so in res's Message, with its own status.
func reapedStatus(res *Result, o *outcome, end *initEnd, ws syscall.WaitStatus) syscall.WaitStatus {
	switch {
	case end != nil && !end.Deadline:
		// The program's CPU time, as its reaper counted what it reaped:
		// not the init's own, which it spent before the run began too.
		res.CPU = end.CPU
		return end.Status
	case end != nil:
		if o.stoppedBy == "" {
			o.stoppedBy, o.stopper = ReasonTimeout, StoppedByInit
		}
		if o.used.Tasks == 0 { // unless the supervisor read the program later, at its backstop
			o.used = usage{RunQueue: end.RunQueueWait, Tasks: end.RunQueueTasks, MaxRunQueue: end.RunQueueWaitMax, CPU: end.CPU}
		}
		res.CPU += o.used.CPU
		return killedByNamespace
	case o.stoppedBy != "":
		res.CPU += o.used.CPU // read before the kill, as the init would have
		return killedByNamespace
	}
	res.Message = "the sandbox failed: its init (PID 1 of the run) ended without reporting how the program ended: " + waitText(ws)
	o.initLost = true
	return ws
}

// waitText says how a process ended, as a wait status tells it.
func waitText(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "killed by " + unix.SignalName(ws.Signal())
	}
	return fmt.Sprintf("exit status %d", ws.ExitStatus())
}

// setKernelCounts records what the kernel counted in the run's control
// group. There, running out of memory is the kernel's OOM kill, counted,
// not a guess from the error text.
func setKernelCounts(res *Result, p Policy, st cgroup.Stats) {
	res.MemoryPeak, res.PidsPeak, res.ForksRefused = st.MemoryPeak, int(st.PidsPeak), int(st.PidsLimitHits)
	if p.Hardened.Landlock {
		res.LandlockABI = landlock.ABI()
	}
	// The defect's site is asked only where the kernel's count and the
	// text disagree: elsewhere both give the same flag.
	if kernel := st.OOMKills > 0; res.OOM != kernel && !mutants.On(mutants.OOMFromText) {
		res.OOM = kernel
	}
}

// setStatus records how the program ended: its exit code or the signal,
// and whether it ran out of memory. Stderr must be set.
func setStatus(res *Result, ws syscall.WaitStatus) {
	if ws.Signaled() {
		res.ExitCode = -1
		res.Signal = unix.SignalName(ws.Signal())
	} else if status := ws.ExitStatus(); status == 0 || !mutants.On(mutants.ExitCodeLost) {
		res.ExitCode = status
	}
	// The defect's site is asked only where it changes the answer, so that
	// the harness's coverage counts only runs it can matter to.
	if (ws.Signaled() || ws.ExitStatus() != 0) && looksLikeOOM(res.Stderr) && !mutants.On(mutants.OOMFlagLost) {
		res.OOM = true
	}
}

// workDir is where the program starts: the session's directory from L2 up,
// else the application's.
func workDir(p Policy, c Command, dir string) (string, error) {
	if p.Workspace.Private && !mutants.On(mutants.SharedWorkdir) {
		return dir, nil
	}
	if c.Dir != "" {
		return filepath.Abs(c.Dir)
	}
	return os.Getwd()
}

// environment is the program's environment.
func environment(p Policy, c Command, dir string) []string {
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	if !p.Workspace.ScrubEnv || mutants.On(mutants.EnvInherited) {
		return env
	}
	lang := "C.UTF-8"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "LANG="); ok && v != "" {
			lang = v
		}
	}
	// PATH is not taken from the caller: it may name directories the
	// program's identity cannot read (a pyenv shim under /root).
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"LANG=" + lang,
		"HOME=" + sessionAt(p, dir),
		"TMPDIR=" + sessionAt(p, dir),
	}
}

// buildCmd prepares the command: the program itself at L0, else this
// binary re-executed as the init, which sets limits, mounts and privileges
// up and then execs the program, reporting a failure on the init pipe.
// With a control group, the program starts in it; with an egress proxy,
// the init opens its way to it. A reaper's deadline counts from the
// start of the run's clock (runStart.mono); buildCmd reports whether the
// init stays as the program's reaper.
func (r *liveRun) buildCmd() (*exec.Cmd, bool, error) {
	p, c, dir, eg := r.p, r.c, r.dir, r.eg
	l := hostLaunch(p)
	if p.userNS() {
		l.addNamespaces(p, c, dir)
		l.addReaper(p, r.rs.mono)
	}
	if r.rg != nil {
		l.group = r.rg
	}
	env := environment(p, c, dir)
	switch {
	case eg != nil && l.ownNetwork():
		l.egress = eg
		env = append(env, proxyEnv(EgressProxy)...)
	case eg != nil && l.hostEgress:
		addr, err := eg.listenOnHost()
		if err != nil {
			return nil, false, err
		}
		env = append(env, proxyEnv(addr.String())...)
		if l.cfg.Landlock != nil {
			l.cfg.Landlock.ConnectTCP = []uint16{uint16(addr.Port)}
		}
	}
	cmd, err := l.command(c, env, r.cwd, r.ps, nil)
	return cmd, l.cfg.Reaper != nil, err
}

// startBare is the fail_open defect's fallback: it warns that the
// namespaces could not be made and starts the program without them (in
// the run's control group, when there is one).
func (r *liveRun) startBare(nsErr error) (*exec.Cmd, error) {
	fmt.Fprintf(os.Stderr, "sandbox: namespaces unavailable (%v); running without them\n", nsErr)
	r.ps.closeInit() // the new command gets a pipe of its own
	l := hostLaunch(r.p)
	l.group = r.rg
	cmd, err := l.command(r.c, environment(r.p, r.c, r.dir), r.cwd, r.ps, nil)
	if err != nil {
		return nil, err
	}
	return cmd, cmd.Start()
}

// launch is how the program is started: its process attributes, and what
// the init sets up before it execs the program.
type launch struct {
	attr   *syscall.SysProcAttr
	cfg    initConfig
	group  *runGroup    // the run's control group, or nil
	egress *egressRelay // the way to the egress proxy, or nil
	// hostEgress is the egress_host_network defect: no network namespace,
	// the proxy on the host's loopback.
	hostEgress bool
}

// ownNetwork reports whether the program gets a network namespace.
func (l launch) ownNetwork() bool { return l.attr.Cloneflags&syscall.CLONE_NEWNET != 0 }

// hostLaunch is the launch without namespaces: resource limits, a session
// of its own and, when the caller is host root, an unprivileged identity.
func hostLaunch(p Policy) launch {
	cfg := initConfig{Defect: string(mutants.Active()), Rlimits: p.Limits.rlimits()}
	if p.Processes.Max > 0 && mutants.On(mutants.NprocRlimitOnly) {
		n := uint64(p.Processes.Max)
		cfg.Rlimits = append(cfg.Rlimits, rlimit{Resource: unix.RLIMIT_NPROC, Cur: n, Max: n})
	}
	attr := &syscall.SysProcAttr{Setsid: p.Limits.KillTree, Pdeathsig: syscall.SIGKILL}
	if HostRoot() {
		id := HostIdentity()
		attr.Credential = &syscall.Credential{Uid: uint32(id.UID), Gid: uint32(id.GID), Groups: []uint32{}}
	}
	return launch{attr: attr, cfg: cfg}
}

// addNamespaces puts the program into a user namespace and the other
// namespaces p asks for, with what the init must do in them (the L6
// layers included). dir is the session's directory.
func (l *launch) addNamespaces(p Policy, c Command, dir string) {
	l.attr.Cloneflags = syscall.CLONE_NEWUSER
	if p.Processes.Namespace && !mutants.On(mutants.NoPIDNS) {
		l.attr.Cloneflags |= syscall.CLONE_NEWPID
		l.cfg.MountProc = true
	}
	switch {
	case !p.Network.Isolate || mutants.On(mutants.NoNetNS):
	case p.Network.Egress() && mutants.On(mutants.EgressHostNetwork):
		l.hostEgress = true // the host's network, and the proxy on its loopback
	default:
		l.attr.Cloneflags |= syscall.CLONE_NEWNET
	}
	if p.Filesystem.OwnIPC {
		// The UTS namespace comes with the IPC one, and stays without it
		// under ipc_shared: L6's init names the run in it.
		l.attr.Cloneflags |= syscall.CLONE_NEWUTS
		if !mutants.On(mutants.IPCShared) {
			l.attr.Cloneflags |= syscall.CLONE_NEWIPC
		}
	}
	l.cfg.Hide = p.Filesystem.Hide
	l.cfg.Private = privateDirs(p.Filesystem.Private)
	if len(l.cfg.Private) > 0 {
		l.cfg.Session = dir
	}
	l.addRoot(p, c, dir)
	l.cfg.FreshKeyring = p.Filesystem.FreshKeyring
	l.cfg.DropCaps = p.Filesystem.DropCapabilities
	if p.Hardened.Landlock {
		r := landlockRules(p, c, dir)
		if p.Network.Egress() && l.ownNetwork() && !mutants.On(mutants.EgressLandlockClosed) {
			// Landlock opens a port on every address; in the program's
			// namespace, only the proxy's listener holds this one.
			r.ConnectTCP = []uint16{egressPort}
		}
		l.cfg.Landlock, l.cfg.LandlockABI = &r, p.Hardened.LandlockABI
	}
	l.cfg.SyscallFilter = p.Hardened.SyscallFilter
	l.cfg.OwnIdentity = p.Hardened.OwnIdentity
	l.cfg.NoNewPrivs = p.Hardened.NoNewPrivs
	if l.cfg.MountProc || len(l.cfg.Hide) > 0 || len(l.cfg.Private) > 0 {
		l.attr.Cloneflags |= syscall.CLONE_NEWNS
		l.cfg.PrivateMounts = true
	}
	// Root inside, the program's host identity outside. setuid(0) inside
	// is needed when the caller is host root: its uid 0 is not the one
	// mapped.
	id := HostIdentity()
	l.attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: id.UID, Size: 1}}
	l.attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: id.GID, Size: 1}}
	l.attr.Credential = &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true}
}

// addReaper keeps the init as the program's reaper when p asks for one
// and the program gets a PID namespace of its own (without one, its end
// would not end the run: not so under the no_pid_ns defect), with the
// run's deadline on CLOCK_MONOTONIC counted from startMono.
func (l *launch) addReaper(p Policy, startMono int64) {
	if !p.Processes.Reaper || l.attr.Cloneflags&syscall.CLONE_NEWPID == 0 {
		return
	}
	l.cfg.Reaper = newReaperInit(p, startMono)
}

// newReaperInit is the reaper's deadline under p for a run whose clock
// started at startMono.
func newReaperInit(p Policy, startMono int64) *reaperInit {
	r := &reaperInit{}
	if d := p.TimeLimit(); d > 0 {
		r.Deadline = startMono + int64(d)
		if w := p.Limits.Wall; w == d && w != p.Watchdog {
			r.Wall = true
			if p.Watchdog > d {
				r.Watchdog = startMono + int64(p.Watchdog)
			}
		}
	}
	return r
}

// command is the exec.Cmd for c under l, writing to ps's output pipes.
// With await, the init waits on it for the go record (see warm.go).
func (l launch) command(c Command, env []string, cwd string, ps *pipes, await *os.File) (*exec.Cmd, error) {
	cmd := &exec.Cmd{
		Path:        c.Path,
		Args:        append([]string{c.Path}, c.Args...),
		Env:         env,
		Dir:         cwd,
		SysProcAttr: l.attr,
		Stdout:      ps.outW,
		Stderr:      ps.errW,
	}
	if l.group != nil {
		if err := l.group.attach(cmd, &l.cfg); err != nil {
			return nil, err
		}
	}
	if l.egress != nil {
		// After the init's error pipe (fd 3) and the files before it.
		l.cfg.Egress = &egressInit{FD: initErrFD + 1 + len(cmd.ExtraFiles), Port: egressPort}
		cmd.ExtraFiles = append(cmd.ExtraFiles, l.egress.child)
	}
	if await != nil {
		l.cfg.Await = initErrFD + 1 + len(cmd.ExtraFiles)
		cmd.ExtraFiles = append(cmd.ExtraFiles, await)
	}
	if !l.needsInit() {
		return cmd, nil
	}
	if f := mutants.ChildFile(); f != nil {
		// The harness records which planted sites a probe reaches; the
		// init reports those it asks here (fds 3 and up: the error pipe,
		// then cmd.ExtraFiles in order).
		l.cfg.Cover = initErrFD + 1 + len(cmd.ExtraFiles)
		cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	}
	own := initOwnEnv(env)
	l.cfg.OwnEnv = len(own)
	config, err := encodeConfig(l.cfg)
	if err != nil {
		return nil, err
	}
	if err := ps.openInit(); err != nil {
		return nil, fmt.Errorf("creating the init's error pipe: %w", err)
	}
	cmd.Path = reexec.Path(initArg0, 3+1+len(cmd.ExtraFiles))
	if l.cfg.Root != nil {
		// The init execs the program in its new root, where a program
		// in the session has moved with it.
		cmd.Args[0] = l.cfg.Root.Inside(cmd.Args[0])
	}
	cmd.Args = append([]string{initArg0, config}, cmd.Args...)
	cmd.Env = append(own, cmd.Env...)
	cmd.ExtraFiles = append([]*os.File{ps.initW}, cmd.ExtraFiles...) // initW becomes initErrFD
	return cmd, nil
}

// initOwnEnv returns the entries of initEnv whose names env lacks: os/exec
// keeps only the last entry of a name that appears twice, and the
// program's own value must reach the program.
func initOwnEnv(env []string) []string {
	var own []string
	for _, kv := range initEnv {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, name+"=") }) {
			own = append(own, kv)
		}
	}
	return own
}

// privateDirs are the scratch directories the init makes private.
func privateDirs(dirs []string) []string {
	if !mutants.On(mutants.RunShared) {
		return dirs
	}
	// The defect: /run is left shared, as a sandbox does when a program
	// needs the host's resolver configuration or a service's socket there.
	var out []string
	for _, d := range dirs {
		if !within(d, "/run") {
			out = append(out, d)
		}
	}
	return out
}

// needsInit reports whether there is anything for an init to do.
func (l launch) needsInit() bool {
	return len(l.cfg.Rlimits) > 0 || l.attr.Cloneflags != 0 || l.cfg.DropCaps || l.cfg.FreshKeyring || l.cfg.CgroupTasks > 0
}

// nsHint says what usually lies behind the kernel's refusal to make a
// namespace.
func nsHint(err error) string {
	switch {
	case errors.Is(err, unix.ENOSPC):
		return " (the user.max_user_namespaces limit is reached, or set to 0)"
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return " (unprivileged user namespaces are disabled, or a security policy forbids them)"
	case errors.Is(err, unix.EINVAL):
		return " (the kernel lacks a namespace type, or the caller runs threaded where it must not)"
	}
	return ""
}

// looksLikeOOM is the out-of-memory heuristic: what programs print when an
// allocation fails under RLIMIT_AS.
func looksLikeOOM(stderr string) bool {
	for _, s := range []string{"MemoryError", "Cannot allocate memory", "out of memory", "std::bad_alloc"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// classify says why the run ended.
func classify(p Policy, stoppedBy Reason, ws syscall.WaitStatus, res *Result) Reason {
	switch {
	case stoppedBy != "":
		return stoppedBy
	case res.OOM && ws.Signaled() && ws.Signal() == syscall.SIGKILL:
		return ReasonMemory // the kernel's OOM killer, as the run's control group counts
	case ws.Signaled() && ws.Signal() == syscall.SIGXCPU:
		return ReasonCPU
	case ws.Signaled() && ws.Signal() == syscall.SIGKILL && p.Limits.CPUHard > 0 && res.CPU >= p.Limits.CPU:
		// Nobody here killed it, and it had run past its soft CPU limit:
		// the hard limit did. (A program that SIGKILLs itself that late
		// would be misread; rusage reads too far under the limit on a
		// loaded VM to demand the hard limit itself: 2.6 s for 3 s seen.)
		return ReasonCPU
	case ws.Signaled():
		return ReasonSignal
	case res.OOM:
		return ReasonMemory
	}
	return ReasonExited
}

// starved says whether a run stopped at limit had been kept from running
// for most of it: one of its threads waited for a CPU for half the limit
// or more (see Result.Starved).
func starved(u usage, limit time.Duration) bool {
	return u.Tasks > 0 && limit > 0 && u.MaxRunQueue >= limit/2
}
