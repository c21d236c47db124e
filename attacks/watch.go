package attacks

import (
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
)

// watchEveryProgram is how often the host looks for a backend's program
// once it has stopped looking without pause.
const watchEveryProgram = 5 * time.Millisecond

// watchProgram looks for the program among the descendants of a
// backend's process, pid: the first that runs the interpreter with the
// token. It calls fn with its PID until fn returns true (fn has read what
// it wanted of it), or until stopped; stop reports whether fn returned
// true. For the first spin it looks without pause, as startObserver does:
// a program that fails at once lives for a few milliseconds of its
// interpreter's start, and a sleeping poller on a busy machine misses it.
// A backend that runs the program out of the host's sight (gVisor's
// Sentry runs it as a task of its own) never shows one; for it the
// caller asks for no spin, and the poller costs next to nothing.
func watchProgram(pid int, token string, spin time.Duration, fn func(pid int) bool) (stop func() bool) {
	var quit, done atomic.Bool
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		fast := time.Now().Add(spin)
		for !quit.Load() {
			if d, ok := findProgram(pid, token); ok && fn(d) {
				done.Store(true)
				return
			}
			if time.Now().Before(fast) {
				runtime.Gosched()
			} else {
				time.Sleep(watchEveryProgram)
			}
		}
	}()
	return func() bool { quit.Store(true); <-finished; return done.Load() }
}

// findProgram returns the nearest process below pid that runs the
// interpreter with token among its arguments.
func findProgram(pid int, token string) (int, bool) {
	for _, p := range procfs.Tree(pid) {
		if args := procfs.Cmdline(p.PID); len(args) > 0 && args[0] == evidence.Python && slices.Contains(args, token) {
			return p.PID, true
		}
	}
	return 0, false
}
