package attacks

import (
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"sandboxlab/attacks/backends"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
)

// watchEveryProgram is how often the host looks for a backend's program
// once it has stopped looking without pause.
const watchEveryProgram = 5 * time.Millisecond

// watchEveryNewcomer is how often the host looks for a detached
// backend's program (see backend.spin).
const watchEveryNewcomer = time.Millisecond

// watchProgram looks for the program among the descendants of a
// backend's process, pid (for a detached backend, whose program runs
// under a monitor of its own, podman's conmon: among the processes
// started since the backend's, since, made before it was started): the
// first that runs the interpreter with the token. It calls fn with its PID until fn returns true (fn has read what
// it wanted of it), or until stopped; stop reports whether fn returned
// true. For the first spin it looks without pause, as startObserver does:
// a program that fails at once lives for a few milliseconds of its
// interpreter's start, and a sleeping poller on a busy machine misses it.
// A backend that runs the program out of the host's sight (gVisor's
// Sentry runs it as a task of its own) never shows one; for it the
// caller asks for no spin, and the poller costs next to nothing.
func watchProgram(pid int, token string, since *procfs.Newcomers, spin time.Duration, fn func(pid int) bool) (stop func() bool) {
	var quit, done atomic.Bool
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		fast := time.Now().Add(spin)
		every := watchEveryProgram
		if since != nil {
			every = watchEveryNewcomer
		}
		for !quit.Load() {
			if d, ok := findProgram(pid, token, since); ok && fn(d) {
				done.Store(true)
				return
			}
			if time.Now().Before(fast) {
				runtime.Gosched()
			} else {
				time.Sleep(every)
			}
		}
	}()
	return func() bool { quit.Store(true); <-finished; return done.Load() }
}

// findProgram returns the nearest process below pid (or, for a detached
// backend, the first of those started since) that runs the interpreter
// with token among its arguments.
func findProgram(pid int, token string, since *procfs.Newcomers) (int, bool) {
	var procs []procfs.Proc
	if since != nil {
		procs = since.WithArg(token)
	} else {
		procs = procfs.Tree(pid)
	}
	for _, p := range procs {
		if args := procfs.Cmdline(p.PID); len(args) > 0 && args[0] == evidence.Python && slices.Contains(args, token) {
			return p.PID, true
		}
	}
	return 0, false
}

// Under a virtual machine (backends.Column.Guest) the host sees the
// emulator's process and nothing of the program's: its memory, processes
// and descriptors are the guest kernel's. The attacks whose evidence is
// in the program's processes are not run there; the one whose escape is
// to keep running is judged by how long the program ran in the guest;
// the rest by the same host-side evidence as everywhere (what came back,
// the fixtures, the honeypot).

// guestNA says why attack s is not run under a virtual machine whose own
// limits are limits, or "" when it is.
func guestNA(s *spec, limits string) string {
	if _, watches := s.new().(watcher); !watches || s.elsewhere.keepsRunning {
		return ""
	}
	return "a virtual machine: the host sees only the emulator's process, and this attack's evidence is in the program's processes; " + limits
}

// guestRunaway judges an attack whose escape is to keep running, under a
// virtual machine, by how long the program ran there: still running when
// the harness's watchdog stopped the machine, or running until it ended
// itself past the bound every other backend's run gets (DefaultWatchdog).
// ok is false when the cell is for the judge to decide.
func guestRunaway(s *spec, o *backends.Outcome, started bool) (ev string, ok bool) {
	g := o.Guest
	if !s.elsewhere.keepsRunning || g == nil || !started {
		return "", false
	}
	switch ran := g.InGuest; {
	case o.StoppedBy == backends.StopWatchdog:
		return fmt.Sprintf("no limit: the program was still running in the guest when the harness's watchdog stopped the machine after %d ms", o.Wall.Milliseconds()), true
	case g.Finished && ran >= backends.DefaultWatchdog:
		return fmt.Sprintf("no limit: the program ran %d ms in the guest, until it ended itself (past the %d ms the harness gives any other sandbox's run)",
			ran.Milliseconds(), backends.DefaultWatchdog.Milliseconds()), true
	}
	return "", false
}

// guestNote is what a cell under a virtual machine adds to its evidence:
// what the host could not see, and the run's phases on the host's clock.
func guestNote(g *backends.Guest, stopped bool) string {
	s := ""
	if stopped {
		s = " (a virtual machine: the host sees only the emulator's process, so no mechanism is named"
		if g.Left > 0 {
			s += fmt.Sprintf("; the guest's init killed %d processes the program left", g.Left)
		}
		s += ")"
	}
	return s + fmt.Sprintf("; %s: boot %d ms, program %d ms, shutdown %d ms",
		g.Accel, g.Boot.Milliseconds(), g.Program.Milliseconds(), g.Shutdown.Milliseconds())
}
