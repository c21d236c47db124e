package backends

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/sandbox/cgroup"
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
	group *cgroup.Group // nil: held by token
	began time.Time
	// exited is closed once the backend's own process has been reaped.
	exited     chan struct{}
	out, errs  *capture
	readers    sync.WaitGroup
	outR, errR *os.File
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
	var closeAfter []*os.File
	fail := func(err error) (*Run, error) {
		for _, f := range append(closeAfter, r.outR, r.errR) {
			if f != nil {
				f.Close()
			}
		}
		if g != nil {
			g.Close()
		}
		return nil, fmt.Errorf("starting %s: %w", filepath.Base(l.Argv[0]), err)
	}
	var outW, errW *os.File
	if r.outR, outW, err = os.Pipe(); err != nil {
		return fail(err)
	}
	closeAfter = append(closeAfter, outW)
	if r.errR, errW, err = os.Pipe(); err != nil {
		return fail(err)
	}
	closeAfter = append(closeAfter, errW)

	// A session of its own: no terminal's signals reach it but the
	// harness's; SIGKILL if the harness's thread that started it dies.
	attr := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL, Credential: l.Credential}
	cmd := &exec.Cmd{Path: l.Argv[0], Args: l.Argv}
	var gateR, gateW *os.File
	switch {
	case g != nil && g.Version() == 2:
		fd, err := g.FD()
		if err != nil {
			return fail(err)
		}
		attr.UseCgroupFD, attr.CgroupFD = true, fd
	case g != nil:
		if gateR, gateW, err = os.Pipe(); err != nil {
			return fail(err)
		}
		closeAfter = append(closeAfter, gateR, gateW)
		cmd = reexec.Command(gateHelper, l.Argv...)
		cmd.ExtraFiles = []*os.File{gateR} // gateFD
	}
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr, cmd.SysProcAttr = l.Env, l.Dir, outW, errW, attr
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	r.began = time.Now()
	r.cmd = cmd
	outW.Close()
	errW.Close()
	if gateW != nil {
		gateR.Close() // the helper holds it now
		err := g.Add(cmd.Process.Pid)
		if err == nil {
			_, err = gateW.Write([]byte{1})
		}
		gateW.Close()
		if err != nil {
			// Let go without the byte: the helper refuses to exec.
			cmd.Process.Kill()
			cmd.Wait()
			r.outR.Close()
			r.errR.Close()
			g.Close()
			return nil, fmt.Errorf("starting %s in its control group: %w", filepath.Base(l.Argv[0]), err)
		}
	}
	r.readers.Add(2)
	go r.read(r.outR, r.out)
	go r.read(r.errR, r.errs)
	go func() {
		cmd.Wait() // its status is in cmd.ProcessState
		close(r.exited)
	}()
	return r, nil
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
	watchdog := time.NewTimer(r.l.Watchdog)
	defer watchdog.Stop()
	select {
	case <-r.exited:
	case <-ctx.Done():
		o.StoppedBy = StopCancelled
	case <-watchdog.C:
		o.StoppedBy = StopWatchdog
	}
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
		r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.exited:
		case <-time.After(termGrace):
		}
	}
	killErr := r.kill()
	select {
	case <-r.exited:
	case <-time.After(killLimit):
		killErr = errors.Join(killErr, fmt.Errorf("the backend's process %d did not end after SIGKILL", r.PID()))
	}
	r.drain()
	if ps := r.cmd.ProcessState; ps != nil {
		o.ExitCode = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			o.Signal = unix.SignalName(ws.Signal())
		}
		o.CPU = ps.UserTime() + ps.SystemTime()
	}
	o.Stdout, o.StdoutBytes = r.out.kept, r.out.n
	o.Stderr, o.StderrBytes = r.errs.kept, r.errs.n
	return o, killErr
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
			k.Kill(p.PID)
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
// session and every process with the run's token.
func (r *Run) kill() error {
	if r.group != nil {
		return r.group.Close()
	}
	syscall.Kill(-r.PID(), syscall.SIGKILL) // its session's process group
	procfs.KillWithArg(r.l.Token, killLimit)
	if left := procfs.WithArg(r.l.Token); len(left) > 0 {
		return fmt.Errorf("killing the run: %d processes with its token survive", len(left))
	}
	return nil
}

// drain waits for the output pipes to close (every holder is dead now),
// then closes them whatever holds them still.
func (r *Run) drain() {
	done := make(chan struct{})
	go func() { r.readers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(drainLimit):
		r.outR.Close()
		r.errR.Close()
		<-done
	}
}

// read copies one stream into c until it closes.
func (r *Run) read(f *os.File, c *capture) {
	defer r.readers.Done()
	io.Copy(c, f)
	f.Close()
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
