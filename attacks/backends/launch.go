package backends

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/sandbox/cgroup"
	"sandboxlab/sandbox/child"
	"sandboxlab/sandbox/procfs"
	"sandboxlab/sandbox/reexec"
)

// How the harness holds a backend's run, as the report words it.
const (
	// HeldByGroup: the run is in a control group of its own, which the
	// harness kills whole.
	HeldByGroup = "a control group of its own"
	// HeldByToken: without a usable control group, the harness kills the
	// run's process group and every process that carries the run's token.
	// A process that leaves both (a daemon that execs something else in a
	// session of its own) would escape that; the report says which held
	// a run.
	HeldByToken = "its process group and the run's token (no usable control group)"
)

// How a run ended when the harness ended it.
const (
	// StopWatchdog: the harness's watchdog ended a run the backend had not.
	StopWatchdog = "watchdog"
	// StopCancelled: the caller ended it (an escape already certain, or
	// an interrupt).
	StopCancelled = "cancelled"
)

// Timings of the end of a run.
const (
	// settleLimit bounds the wait, after the backend's own process has
	// exited, for the rest of the run to go: a backend's helpers and a
	// namespace being torn down take a few milliseconds; what is still
	// there after this is left behind.
	settleLimit = 250 * time.Millisecond
	// killLimit bounds the wait for the killed run to be gone.
	killLimit = 10 * time.Second
	// drainLimit bounds the wait for the output pipes to close once
	// everything of the run is dead.
	drainLimit = 2 * time.Second
	// termGrace bounds the wait for a backend the harness stops to end
	// by itself on SIGTERM (firejail takes about 3 s on a busy machine).
	termGrace = 5 * time.Second
)

// Launch is one run under a backend.
type Launch struct {
	// Argv is the backend's command followed by the program's; Argv[0] is
	// an absolute path.
	Argv []string
	// Env is the backend's environment, Dir its working directory.
	Env []string
	Dir string
	// Credential, when set, is the identity the backend starts as.
	Credential *syscall.Credential
	// Watchdog ends the run after this long.
	Watchdog time.Duration
	// Token tags the program's processes (procfs.WithArg), and Program
	// is the program's executable: a process that runs it with the token
	// is the program's own, not the backend's.
	Token   string
	Program string
	// OutputMax is the most bytes kept of each stream; the rest is only
	// counted.
	OutputMax int

	// started, when set, is called once the backend's process has
	// started, with the time it did; finish, when set, completes the
	// outcome once the run has ended and everything of it is gone (a
	// virtual machine's program writes its output and status into its job
	// directory, not on the emulator's streams).
	started func(at time.Time)
	finish  func(o *Outcome)
}

// Outcome is how a run under a backend ended, as the host saw it.
type Outcome struct {
	// ExitCode is the backend's exit status, -1 when a signal ended it;
	// Signal names that signal.
	ExitCode int
	Signal   string
	// StoppedBy is StopWatchdog or StopCancelled when the harness ended
	// the run, "" when the backend's own process ended by itself.
	StoppedBy string
	// Stdout and Stderr are what the run wrote, up to Launch.OutputMax
	// bytes each; StdoutBytes and StderrBytes count all of it.
	Stdout, Stderr           []byte
	StdoutBytes, StderrBytes int64
	// Wall is the time from the start to the end of the backend's own
	// process (or to the harness's stop); CPU is the user and system time
	// of that process and the children it waited for.
	Wall, CPU time.Duration
	// Left lists the run's processes still alive when it ended (after a
	// moment for them to go), as the host saw them then, before the
	// harness killed them.
	Left []Leftover
	// Held says how the harness held the run (HeldByGroup, HeldByToken).
	Held string
	// MemoryPeak is the most memory the run used at once, as its control
	// group counted it (0 without one).
	MemoryPeak int64
	// Guest is what the host saw of a virtual machine's run (nil for
	// other backends).
	Guest *Guest
}

// Leftover is a process of a run still alive when the run ended.
type Leftover struct {
	Proc procfs.Proc
	// Args is its command line.
	Args []string
}

// Run is a backend's run in progress.
type Run struct {
	l     Launch
	cmd   *exec.Cmd
	proc  *child.Process // the backend's own process, reaped at the end of Wait
	group *cgroup.Group  // nil: held by token
	began time.Time
	// exited is closed once the backend's own process has exited (it is
	// reaped only once the run has been killed: until then its pid and
	// its process group id name this run alone).
	exited    chan struct{}
	out, errs *capture
	readers   child.Readers
}

// Start starts l in a control group of its own (or, where the machine
// has none to give, a session and process group of its own) and returns
// at once. On cgroup v2 the kernel clones it straight into the group; on
// v1 it starts as a gate helper that waits until it has been added, then
// execs the backend, so that nothing it forks can be outside the group.
func Start(l Launch) (*Run, error) {
	if len(l.Argv) == 0 || !filepath.IsAbs(l.Argv[0]) {
		return nil, fmt.Errorf("starting a backend: want an absolute path first, got %q", l.Argv)
	}
	g, err := cgroup.New(cgroup.Config{})
	if err != nil && !errors.Is(err, cgroup.ErrUnavailable) {
		return nil, fmt.Errorf("starting %s: %w", filepath.Base(l.Argv[0]), err)
	}
	r := &Run{l: l, group: g, exited: make(chan struct{}), out: &capture{max: l.OutputMax}, errs: &capture{max: l.OutputMax}}
	if err := r.start(); err != nil {
		if g != nil {
			g.Close()
		}
		return nil, fmt.Errorf("starting %s: %w", filepath.Base(l.Argv[0]), err)
	}
	return r, nil
}

// start starts the backend with its output on pipes the harness reads,
// and lets it go once it is in its group.
func (r *Run) start() error {
	outR, outW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer outW.Close() // the backend holds its own copy once started
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		return err
	}
	defer errW.Close()
	cmd, gp, err := r.command(outW, errW)
	if err == nil {
		err = cmd.Start()
		gp.started()
	}
	if err != nil {
		gp.close()
		outR.Close()
		errR.Close()
		return err
	}
	r.began, r.cmd, r.proc = time.Now(), cmd, child.Hold(cmd.Process.Pid)
	if err := gp.open(r.group, cmd.Process.Pid); err != nil {
		// Let go without the byte: the helper refuses to exec.
		r.proc.Signal(unix.SIGKILL)
		r.proc.Reap(cmd.Wait)
		outR.Close()
		errR.Close()
		return fmt.Errorf("in its control group: %w", err)
	}
	r.readers.Read(outR, r.out)
	r.readers.Read(errR, r.errs)
	if r.l.started != nil {
		r.l.started(r.began)
	}
	go func() {
		r.proc.WaitExit()
		close(r.exited)
	}()
	return nil
}

// command is the backend's command, writing to outW and errW, and the
// gate it waits at on cgroup v1 (nil otherwise).
func (r *Run) command(outW, errW *os.File) (*exec.Cmd, *gatePipe, error) {
	// A session of its own: no terminal's signals reach it but the
	// harness's; SIGKILL if the harness's thread that started it dies.
	attr := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL, Credential: r.l.Credential}
	cmd := &exec.Cmd{Path: r.l.Argv[0], Args: r.l.Argv}
	var gt *gatePipe
	switch g := r.group; {
	case g != nil && g.Version() == 2:
		fd, err := g.FD()
		if err != nil {
			return nil, nil, err
		}
		attr.UseCgroupFD, attr.CgroupFD = true, fd
	case g != nil:
		gr, gw, err := os.Pipe()
		if err != nil {
			return nil, nil, err
		}
		gt = &gatePipe{r: gr, w: gw}
		cmd = reexec.Command(gateHelper, r.l.Argv...)
		cmd.ExtraFiles = []*os.File{gr} // gateFD
	}
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr, cmd.SysProcAttr = r.l.Env, r.l.Dir, outW, errW, attr
	return cmd, gt, nil
}

// gatePipe is the harness's end of a gate helper's pipe (cgroup v1): the
// helper execs the backend only once it has read a byte from it. A nil
// gate is no gate.
type gatePipe struct{ r, w *os.File }

// started closes the helper's end once the helper holds its own.
func (gt *gatePipe) started() {
	if gt != nil && gt.r != nil {
		gt.r.Close()
		gt.r = nil
	}
}

// open adds the helper's pid to g and lets it go on.
func (gt *gatePipe) open(g *cgroup.Group, pid int) error {
	if gt == nil {
		return nil
	}
	err := g.Add(pid)
	if err == nil {
		_, err = gt.w.Write([]byte{1})
	}
	gt.close()
	return err
}

func (gt *gatePipe) close() {
	if gt != nil {
		gt.started()
		gt.w.Close()
	}
}

// PID is the backend's own process.
func (r *Run) PID() int { return r.cmd.Process.Pid }

// Wait waits until the backend's own process ends, the watchdog fires or
// ctx is done; notes what of the run is still alive; asks a backend it
// stops to end (SIGTERM), then kills all of the run and waits until it is
// gone. The error is for a run the harness could not
// end: processes it could not kill.
func (r *Run) Wait(ctx context.Context) (*Outcome, error) {
	o := &Outcome{Held: HeldByToken}
	if r.group != nil {
		o.Held = HeldByGroup
	}
	o.StoppedBy = r.watch(ctx)
	o.Wall = time.Since(r.began)
	if o.StoppedBy == "" {
		o.Left = r.settle()
	} else {
		o.Left = r.alive()
	}
	if r.group != nil {
		if st, err := r.group.Stats(); err == nil {
			o.MemoryPeak = st.MemoryPeak
		}
	}
	if o.StoppedBy != "" {
		// The program first, then the backend's own kill switch: a
		// backend killed outright may leave its state behind (firejail
		// its entries under /run/firejail), where one whose program has
		// ended, or that gets SIGTERM, ends as usual and cleans up. What
		// does not end in time is killed with the rest.
		r.killProgram()
		r.proc.Signal(unix.SIGTERM)
		select {
		case <-r.exited:
		case <-time.After(termGrace):
		}
	}
	reaped, killErr := r.end()
	r.readers.Drain(drainLimit)
	if ps := r.cmd.ProcessState; reaped && ps != nil {
		o.ExitCode = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			o.Signal = unix.SignalName(ws.Signal())
		}
		o.CPU = ps.UserTime() + ps.SystemTime()
	}
	o.Stdout, o.StdoutBytes = r.out.kept, r.out.n
	o.Stderr, o.StderrBytes = r.errs.kept, r.errs.n
	if r.l.finish != nil {
		r.l.finish(o)
	}
	return o, killErr
}

// watch waits until the backend's own process ends (""), ctx is done
// (StopCancelled) or the watchdog fires (StopWatchdog).
func (r *Run) watch(ctx context.Context) string {
	watchdog := time.NewTimer(r.l.Watchdog)
	defer watchdog.Stop()
	select {
	case <-r.exited:
		return ""
	case <-ctx.Done():
		return StopCancelled
	case <-watchdog.C:
		return StopWatchdog
	}
}

// end kills all of the run, waits until the backend's own process has
// ended and reaps it, and reports whether it did (the status is then in
// r.cmd.ProcessState). An error says what could not be killed.
func (r *Run) end() (reaped bool, err error) {
	killErr := r.kill()
	select {
	case <-r.exited:
		r.proc.Reap(r.cmd.Wait)
		return true, killErr
	case <-time.After(killLimit):
		go r.proc.Reap(r.cmd.Wait) // whenever it ends
		return false, errors.Join(killErr, fmt.Errorf("the backend's process %d did not end after SIGKILL", r.PID()))
	}
}

// alive lists the processes of the run other than the backend's own,
// alive and not on their way out (no SIGKILL pending).
func (r *Run) alive() []Leftover {
	var pids []int
	if r.group != nil {
		for _, dir := range r.group.Dirs() {
			b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil && !slices.Contains(pids, pid) {
					pids = append(pids, pid)
				}
			}
		}
	} else {
		for _, p := range procfs.WithArg(r.l.Token) {
			pids = append(pids, p.PID)
		}
	}
	var out []Leftover
	for _, pid := range pids {
		if pid == r.PID() {
			continue
		}
		if p, err := procfs.Stat(pid); err == nil && p.Alive() && !procfs.Killed(pid) {
			out = append(out, Leftover{Proc: p, Args: procfs.Cmdline(pid)})
		}
	}
	return out
}

// killProgram kills the program's own processes that the host can see.
func (r *Run) killProgram() {
	var k procfs.Killer
	for _, p := range procfs.WithArg(r.l.Token) {
		if args := procfs.Cmdline(p.PID); len(args) > 0 && args[0] == r.l.Program && p.PID != r.PID() {
			k.KillProc(p)
		}
	}
	k.Wait(killLimit)
}

// settle waits up to settleLimit for the rest of a run whose backend has
// ended to go, and returns what is still alive then.
func (r *Run) settle() []Leftover {
	deadline := time.Now().Add(settleLimit)
	for {
		left := r.alive()
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// kill kills everything of the run and waits until it is gone: the
// control group (Close kills every member and removes the group), or the
// session's process group and every process with the run's token. The
// backend's own process is not reaped yet, so the group's id is still the
// run's.
func (r *Run) kill() error {
	if r.group != nil {
		return r.group.Close()
	}
	r.proc.SignalGroup(unix.SIGKILL)
	procfs.KillWithArg(r.l.Token, killLimit)
	if left := procfs.WithArg(r.l.Token); len(left) > 0 {
		return fmt.Errorf("killing the run: %d processes with its token survive", len(left))
	}
	return nil
}

// capture keeps the first max bytes written to it and counts them all.
type capture struct {
	max  int
	kept []byte
	n    int64
}

func (c *capture) Write(p []byte) (int, error) {
	if room := c.max - len(c.kept); room > 0 {
		c.kept = append(c.kept, p[:min(room, len(p))]...)
	}
	c.n += int64(len(p))
	return len(p), nil
}
