package checks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
)

// Preset returns level n's policy with tweaks applied: a check takes
// away the layers that would hide a defect in the one it tests. The
// masking search (Options.Without) then takes one more away.
func Preset(n int, tweaks ...func(*sandbox.Policy)) sandbox.Policy {
	p := sandbox.MustPreset(n)
	for _, tw := range tweaks {
		tw(&p)
	}
	if settings.without != nil {
		settings.without.Remove(&p)
	}
	return p
}

// settings is what one RunAll asks of every check (see Options): of
// every policy, for the masking search, one more layer taken away or
// the checks' own removals undone; of every session, its queue and its
// observer.
var settings struct {
	without  *sandbox.Layer
	plain    bool
	tookAway func(layer string)
	queue    sandbox.Queue
	observe  func(*sandbox.Result)
}

// NoCPULimit takes the CPU limit away.
func NoCPULimit(p *sandbox.Policy) { takeAway(p, "cpu_limit") }

// takeAway removes a layer from p, on purpose: unless the masking search
// asks to see the check without its removals (Options.Plain).
func takeAway(p *sandbox.Policy, layer string) {
	if settings.tookAway != nil {
		settings.tookAway(layer)
	}
	if settings.plain {
		return
	}
	l, err := sandbox.LookupLayer(layer)
	if err != nil {
		panic(err) // a misspelt layer in a check
	}
	l.Remove(p)
}

// cpuBound is the wall clock for runs that only a CPU limit should stop:
// 3 s of CPU can take 9 s of wall time when the mutation run keeps both
// cores busy with several such loops; twice that leaves room. It costs
// time only when the CPU limit is broken.
const cpuBound = 20 * time.Second

// cpuBackstop is the wall clock for runs whose CPU time the check watches
// itself (untilCPU): it only bounds a run that the host cannot see, so on a
// loaded machine a CPU-bound loop may take as long as it needs to reach its
// limit.
const cpuBackstop = 120 * time.Second

// untilCPU returns a context for a run of the program tagged tok that is
// cancelled once the host sees the program's processes use more than
// budget of CPU: the CPU limit, if it worked, would have stopped them
// before. A broken limit then costs budget of CPU, however loaded the
// machine, instead of a wall clock that a loaded machine can also reach
// with the limit intact.
func (t *T) untilCPU(tok string, budget time.Duration) context.Context {
	return t.untilCPUOf(budget, func(fn func(time.Time, []procfs.Proc) bool) *evidence.Sampler {
		return evidence.SampleUntil(tok, 20*time.Millisecond, fn)
	})
}

// untilCPUOfCode is untilCPU for a program that carries its tag at the
// start of its code (evidence.SampleUntilPrefix), as code a tool runs.
func (t *T) untilCPUOfCode(prefix string, budget time.Duration) context.Context {
	return t.untilCPUOf(budget, func(fn func(time.Time, []procfs.Proc) bool) *evidence.Sampler {
		return evidence.SampleUntilPrefix(prefix, 20*time.Millisecond, fn)
	})
}

func (t *T) untilCPUOf(budget time.Duration, sample func(func(time.Time, []procfs.Proc) bool) *evidence.Sampler) context.Context {
	ctx, cancel := context.WithCancel(t.Context())
	s := sample(func(_ time.Time, procs []procfs.Proc) bool {
		var used time.Duration
		for _, p := range evidence.Programs(procs) {
			used += p.CPU
		}
		if used > budget {
			cancel()
			return true
		}
		return false
	})
	t.Cleanup(func() {
		s.Stop()
		cancel()
	})
	return ctx
}

// programStart watches for the program tagged tok and returns a func
// saying when it started by the host's count (the start time of its
// first process, to the 10 ms tick; zero if the host never saw it). A
// run timed from there leaves out the harness's own set-up and start,
// which a loaded machine stretches past any margin a clock's check can
// give.
func (t *T) programStart(tok string) func() time.Time {
	var mu sync.Mutex
	var at time.Time
	s := evidence.SampleUntil(tok, 5*time.Millisecond, func(_ time.Time, procs []procfs.Proc) bool {
		if len(procs) == 0 {
			return false
		}
		first := procs[0]
		for _, p := range procs {
			if p.Start < first.Start {
				first = p
			}
		}
		mu.Lock()
		at = first.Started()
		mu.Unlock()
		return true
	})
	t.Cleanup(s.Stop)
	return func() time.Time {
		s.Stop()
		mu.Lock()
		defer mu.Unlock()
		return at
	}
}

// cpuLimits sets the soft and hard CPU limits (whole seconds).
func cpuLimits(soft, hard time.Duration) func(*sandbox.Policy) {
	return func(p *sandbox.Policy) { p.Limits.CPU, p.Limits.CPUHard = soft, hard }
}

// timeLimits sets the wall clock and the watchdog to d.
func TimeLimits(d time.Duration) func(*sandbox.Policy) {
	return func(p *sandbox.Policy) { p.Limits.Wall, p.Watchdog = d, d }
}

// notTimed gives a hardening check's run a 10 s clock: its promise is
// about what the program reaches, writes or is refused, not about time,
// and on a loaded machine Python's start alone can outlast a level's
// 1.5 s clock before the program tries anything (mutate --repeat 5
// beside two busy loops saw it). Both ways are wrong: on the correct
// sandbox the check fails for the clock, not the layer; under a defect
// a program stopped before it tried reads as kept out, and the defect
// goes uncaught (fresh_keyring caught keyring_inherited in 1 of 5). A
// check about time keeps its level's clock, and so do the course's
// checks, which are pinned.
func notTimed(p *sandbox.Policy) { TimeLimits(10 * time.Second)(p) }

// session makes a session below the check's root, closed after the check.
func (t *T) session(p sandbox.Policy, quota int64) *sandbox.Session {
	t.Helper()
	s, err := sandbox.NewSession(sandbox.Options{Policy: p, Root: t.sessionsDir(), Quota: quota,
		Queue: settings.queue, Observe: settings.observe})
	t.NilError(err)
	t.Cleanup(func() { s.Close() })
	return s
}

// python runs Python source in s with args after it (sys.argv[1:]); any
// failure to run is a failed check. Without a Dir the program's
// application directory is one of the check's own, never the harness's
// working directory, so that where the harness was started cannot change
// a verdict.
func (t *T) python(s *sandbox.Session, cmd sandbox.Command, src string, args ...string) *sandbox.Result {
	t.Helper()
	if cmd.Dir == "" {
		cmd.Dir = t.ownedDir("app")
	}
	cmd.Path = evidence.Python
	cmd.Args = append([]string{"-c", src}, args...)
	res, err := s.Run(t.Context(), cmd)
	t.NilError(err)
	return res
}

// runPython runs Python source in a fresh session under p.
func (t *T) runPython(p sandbox.Policy, cmd sandbox.Command, src string, args ...string) *sandbox.Result {
	t.Helper()
	return t.python(t.session(p, 0), cmd, src, args...)
}

// token returns a random string: a tag for a program's command line, by
// which the host finds every process it forks, or a canary secret.
func token() string { return procfs.Tag() }

// tagged makes a token and kills whatever still carries it after the check.
func (t *T) tagged() string {
	tok := token()
	t.Cleanup(func() { procfs.KillWithArg(tok, 10*time.Second) })
	return tok
}

// alive counts the live processes tagged with tok.
func alive(tok string) int { return len(procfs.WithArg(tok)) }

// sessionsDir is where the check's sessions are made: a directory of
// their own, since at L5 the directory holding a session is covered
// (sibling sessions stay out of sight) and the fixtures must not be.
func (t *T) sessionsDir() string {
	t.Helper()
	dir := filepath.Join(t.Root(), "sessions")
	t.NilError(os.MkdirAll(dir, 0o711))
	t.NilError(os.Chmod(dir, 0o711))
	return dir
}

// ownedDir makes a directory below the root that belongs to the program's
// host identity, as the user's own files belong to the user running the
// agent: then the layer under test, not the uid mapping, must stop it.
func (t *T) ownedDir(name string) string {
	t.Helper()
	dir := filepath.Join(t.Root(), name)
	t.NilError(os.MkdirAll(dir, 0o755))
	id := sandbox.HostIdentity()
	t.NilError(os.Chown(dir, id.UID, id.GID))
	return dir
}

// ownedFile writes a file owned by the program's host identity.
func (t *T) ownedFile(path, content string) {
	t.Helper()
	t.NilError(os.WriteFile(path, []byte(content), 0o600))
	id := sandbox.HostIdentity()
	t.NilError(os.Chown(path, id.UID, id.GID))
}

// hostSecret writes a secret file outside every session that only the
// harness's own identity can read: only the host side could leak it.
func (t *T) hostSecret() (path, content string) {
	t.Helper()
	dir := filepath.Join(t.Root(), "host")
	t.NilError(os.MkdirAll(dir, 0o755))
	path, content = filepath.Join(dir, "secret.txt"), token()
	t.NilError(os.WriteFile(path, []byte(content), 0o600))
	return path, content
}

// forkBomb forks 40 children that sleep, and keeps trying when fork
// fails, as bombs do.
const forkBomb = `
import os, time
n = 0
while n < 40:
    try:
        pid = os.fork()
    except OSError:
        time.sleep(0.01)
        continue
    if pid == 0:
        time.sleep(10)
        os._exit(0)
    n += 1
time.sleep(10)
`

// spent says how a run used its time, for the message of a check whose
// run ended other than it should: a run kept from the CPU (a long
// run-queue wait) reads differently from one that worked, or slept, the
// whole clock.
func spent(r *sandbox.Result) string {
	return fmt.Sprintf("%v wall, %v CPU, longest run-queue wait %v, peak %.1f MiB",
		r.Wall.Round(time.Millisecond), r.CPU.Round(time.Millisecond), r.RunQueueWaitMax.Round(time.Millisecond), float64(r.MemoryPeak)/(1<<20))
}

// machineLock holds a lock named name, shared by every process on the
// machine's network namespace, until the check ends. It is an abstract
// unix socket's name: the kernel frees it when the holder dies, and it
// leaves no file behind. A check takes it when what it measures is
// machine-wide and another instance of itself (a concurrent worker of
// the mutation run, under another defect) would disturb it.
func (t *T) machineLock(name string) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	t.NilError(err, "a socket for the lock %s", name)
	addr := &unix.SockaddrUnix{Name: "@sandboxlab/lock/" + name}
	// A holder measures for seconds at most; a minute means it is stuck.
	deadline := time.Now().Add(time.Minute)
	for {
		err = unix.Bind(fd, addr)
		if err != unix.EADDRINUSE || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		unix.Close(fd)
		t.NilError(err, "taking the machine-wide lock %s", name)
	}
	t.Cleanup(func() { unix.Close(fd) })
}
