package attacks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"sandboxlab/mutants"
	"sandboxlab/report"
	"sandboxlab/sandbox"
	"sandboxlab/sandbox/cleanup"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
	vocab "sandboxlab/verdict"
)

// watchEvery is how often a watch samples the host while a program runs.
const watchEvery = 10 * time.Millisecond

// killLimit bounds the wait for an attack's processes to die.
const killLimit = 5 * time.Second

// Run runs the attacks at the levels opts choose, one cell at a time
// (sequentially: the output flood's measure of held bytes needs a quiet
// harness, and the matrix must not depend on scheduling), and returns the
// matrix. Everything a cell started is gone when the next one starts.
// When ctx is cancelled it cleans the current cell up and returns
// ctx.Err(). Bad selections are errors wrapping ErrUsage.
func Run(ctx context.Context, opts Options) (*report.Attacks, error) {
	list, levels, err := opts.selection()
	if err != nil {
		return nil, err
	}
	if err := prepare(&opts.TempDir); err != nil {
		return nil, err
	}
	var without *sandbox.Layer
	if opts.Without != "" {
		l, err := sandbox.LookupLayer(opts.Without)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUsage, err)
		}
		without = &l
	}
	rep := &report.Attacks{
		Identity: report.Identity{UID: os.Geteuid(), Root: sandbox.HostRoot(), ProgramUID: sandbox.HostIdentity().UID},
		Defect:   string(mutants.Active()),
		Levels:   []int{},
		Suites:   map[string]vocab.Suite{},
		Expected: map[string]int{},
	}
	run := map[int]bool{}
	for _, a := range list {
		rep.Attacks = append(rep.Attacks, a.id)
		rep.Suites[a.id] = a.suite
		rep.Expected[a.id] = a.firstStop
		for _, l := range a.levels(levels) {
			run[l] = true
		}
	}
	for _, l := range levels {
		if run[l] {
			rep.Levels = append(rep.Levels, l)
		}
	}
	for _, a := range list {
		for _, level := range a.levels(levels) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			var cell report.Cell
			onOwnThread(func() { cell, err = runCell(ctx, a, level, opts, without) })
			if err != nil {
				return nil, fmt.Errorf("%s: %w", report.Cell{Attack: a.id, Level: level}.Name(), err)
			}
			rep.Cells = append(rep.Cells, cell)
			if opts.Progress != nil {
				opts.Progress(cell)
			}
		}
	}
	rep.Summarize()
	return rep, nil
}

// prepare checks what every cell needs (the interpreter, a fixture
// directory the program's identity can reach), filling in *tempDir.
func prepare(tempDir *string) error {
	if _, err := os.Stat(evidence.Python); err != nil {
		return fmt.Errorf("the attack programs need %s: %w", evidence.Python, err)
	}
	if *tempDir == "" {
		// Fixtures go where a user's files would be, not in a scratch
		// directory that L5 makes private (see evidence.FixtureRoot).
		var err error
		if *tempDir, err = evidence.FixtureRoot(); err != nil {
			return err
		}
	}
	return checkReachable(*tempDir)
}

// onOwnThread runs f on a goroutine locked to an OS thread of its own,
// which ends with it. An attack may change that thread's credentials for
// the run it forks from there (steal_keyring gives it a session keyring
// with a canary key), and nothing of that reaches the next cell.
func onOwnThread(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		f()
	}()
	<-done
}

// env is one cell in progress, as every attack may use it: the level's
// policy, the token, the shared fixtures, the session and what the host
// saw. What only one attack needs lives in that attack's own state.
type env struct {
	policy  sandbox.Policy // the level's preset, the fake home hidden where homes are
	token   string         // tags every process of the attack (procfs.WithArg)
	fx      *fixtures
	session *sandbox.Session // open from just after setup until the cleanup
	// queue and observe are the sessions' (Options.Queue, Options.Observe).
	queue   sandbox.Queue
	observe func(*sandbox.Result)

	// iso is what the host saw of the program's isolation.
	iso isolation
	// unseen is added to the evidence of a layer the host could not look
	// at: notSeen at sandboxlab's levels, which then take the layer from
	// the policy.
	unseen string

	// Seen after the run.
	res        *sandbox.Result
	aliveAfter []procfs.Proc // its processes alive when Run returned

	// undo removes what the attack's setup made, last first.
	undo cleanup.Stack
}

// onCleanup registers f to run when the cell is cleaned up, after its
// processes are killed and before its session and fixtures are removed,
// whatever happened to the cell.
func (e *env) onCleanup(f func()) { e.undo.Add(f) }

// unhurried pushes the run's wall clock, and the watchdog with it, back to
// untimedWall, as the checks do for what they do not test: the attack's
// verdict is not about time, and a loaded machine must not stop its
// program before it has done its work (or before the host's side it
// waits on, the egress proxy, a destination, has answered), a stop no
// layer made. Its program ends itself when done, so the longer clock
// costs nothing. A level with no clock keeps none.
func (e *env) unhurried() {
	if e.policy.Limits.Wall > 0 {
		e.policy.Limits.Wall = max(e.policy.Limits.Wall, untimedWall)
	}
	if e.policy.Watchdog > 0 {
		e.policy.Watchdog = max(e.policy.Watchdog, untimedWall)
	}
}

// untimedWall is the wall clock of an unhurried attack.
const untimedWall = 10 * time.Second

// attackProcs returns the live processes of the attack program: tagged by
// the token and running Python (the sandbox's init, a Go binary whose
// arguments carry the token until it execs the program, is not one).
func (e *env) attackProcs() []procfs.Proc { return evidence.Programs(procfs.WithArg(e.token)) }

// runCell runs one attack at one level with fresh fixtures and a fresh
// state, and removes everything afterwards. The error is for the harness
// failing, never for the attack's outcome.
// The fixtures go below opts.TempDir, and the sessions use opts' queue
// and observer. With without, that layer is taken away from the level's
// policy.
func runCell(ctx context.Context, s *spec, level int, opts Options, without *sandbox.Layer) (cell report.Cell, err error) {
	began := time.Now()
	cell = report.Cell{Attack: s.id, Level: level}
	if why := evidence.Lacks(s.needs); why != "" {
		cell.NA = why
		return cell, nil
	}
	fx, err := makeFixtures(opts.TempDir)
	if err != nil {
		return cell, err
	}
	e := &env{
		fx:     fx,
		token:  procfs.Tag(),
		policy: sandbox.MustPreset(level),
		unseen: notSeen,
		queue:  opts.Queue, observe: opts.Observe,
	}
	if without != nil {
		without.Remove(&e.policy)
	}
	v, err := e.run(ctx, s, s.new())
	if cerr := e.cleanup(); err == nil {
		err = cerr
	}
	if err != nil {
		return cell, err
	}
	cell.Escaped, cell.StoppedBy, cell.Evidence = v.escaped, v.stoppedBy, v.evidence
	cell.MS = time.Since(began).Milliseconds()
	return cell, nil
}

// newSession opens a session under p among the cell's fixtures.
func (e *env) newSession(p sandbox.Policy) (*sandbox.Session, error) {
	return sandbox.NewSession(sandbox.Options{Policy: p, Root: e.fx.sessions, Queue: e.queue, Observe: e.observe})
}

// run sets the cell up for attack a (whose program is s's), runs the
// program and judges it.
func (e *env) run(ctx context.Context, s *spec, a attack) (verdict, error) {
	if su, ok := a.(setupper); ok {
		if err := su.setup(e); err != nil {
			return verdict{}, err
		}
	}
	if e.policy.Filesystem.Hide != nil {
		// The fake home is hidden where the preset hides homes.
		e.policy.Filesystem.Hide = append(slices.Clone(e.policy.Filesystem.Hide), e.fx.home)
	}
	var err error
	e.session, err = e.newSession(e.policy)
	if err != nil {
		return verdict{}, fmt.Errorf("opening session: %w", err)
	}
	args := []string{"-c", s.source, e.token}
	if ar, ok := a.(arguer); ok {
		args = append(args, ar.args(e)...)
	}
	cmd := sandbox.Command{Path: evidence.Python, Args: args, Env: e.fx.env, Dir: e.fx.appDir}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	m, measures := a.(measurer)
	if measures {
		m.beforeRun(e)
	}
	stopObserver := e.startObserver()
	stopWatch := e.startWatch(a, cancel)
	res, runErr := e.session.Run(runCtx, cmd)
	stopWatch()
	stopObserver()
	if measures {
		m.afterRun(e)
	}
	e.aliveAfter = e.attackProcs()

	// Judge a quiet world: nothing of the attack left running (nothing
	// more on its way to a honeypot).
	if err := e.killAll(); err != nil {
		return verdict{}, err
	}
	if err := ctx.Err(); err != nil {
		return verdict{}, err
	}
	switch {
	case res == nil && errors.Is(runErr, sandbox.ErrUnavailable):
		// Fail closed: nothing ran.
		return stopped("refused: sandbox unavailable", "%v", runErr), nil
	case res == nil:
		return verdict{}, fmt.Errorf("running the attack: %w", runErr)
	}
	// A run error with a result is the watch ending the run early.
	e.res = res
	e.fillFromPolicy()
	return a.judge(e), nil
}

// startWatch starts a's watch, if it has one, and returns the function
// that stops it; the watch's findings are in a once that returns. A watch
// that finds the escape certain ends the run through cancel.
func (e *env) startWatch(a attack, cancel context.CancelFunc) (stop func()) {
	w, ok := a.(watcher)
	if !ok {
		return func() {}
	}
	s := evidence.SampleUntil(e.token, watchEvery, func(now time.Time, procs []procfs.Proc) bool {
		if w.watch(e, now, evidence.Programs(procs)) {
			cancel() // the escape is certain: end the run
			return true
		}
		return false
	})
	return s.Stop
}

// killAll kills every process tagged with the cell's token, wherever it
// went, and makes sure none is left.
func (e *env) killAll() error {
	procfs.KillWithArg(e.token, killLimit)
	if left := procfs.WithArg(e.token); len(left) > 0 {
		return fmt.Errorf("killing the attack's processes: %d survive (pids %s)", len(left), pids(left))
	}
	return nil
}

// cleanup removes everything the cell made: its processes, what the
// attack's setup made, the session and the fixtures.
func (e *env) cleanup() error {
	errs := []error{e.killAll(), e.undo.Clean()}
	if e.session != nil {
		if err := e.session.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing session: %w", err))
		}
	}
	errs = append(errs, e.fx.remove())
	return errors.Join(errs...)
}

// output is everything the program's output brought back to the host.
func (e *env) output() string { return e.res.Stdout + "\n" + e.res.Stderr }

// layer names the mechanism that stopped the attack when the layer that
// should have stopped it was on; otherwise the stop was not the one
// expected, and the verdict says what was seen instead.
func (e *env) layer(on bool, mechanism, format string, args ...any) verdict {
	v := stopped(mechanism, format, args...)
	if !on {
		v.stoppedBy = "unexpected: " + ended(e.res)
	}
	if !e.iso.seen {
		v.evidence += e.unseen
	}
	return v
}

// programLayer is layer for a mechanism the host sees only in the program
// itself after the init has execed it (capabilities, mounts).
func (e *env) programLayer(on bool, mechanism, format string, args ...any) verdict {
	v := e.layer(on, mechanism, format, args...)
	if e.iso.seen && !e.iso.programSeen {
		v.evidence += e.unseen
	}
	return v
}

// notSeen marks evidence that names a layer from the policy because the
// host could not look at the program in time.
const notSeen = " (the host could not look at the program in time: layer taken from the policy)"

// ended says briefly how a run ended: the stop reason, the status or
// signal, and the last line of its error output.
func ended(r *sandbox.Result) string {
	s := string(r.Reason)
	switch {
	case r.Signal != "":
		s += " by " + r.Signal
	case r.Reason == sandbox.ReasonExited:
		s += fmt.Sprintf(" %d", r.ExitCode)
	}
	if line := lastLine(r.Stderr); line != "" {
		s += ", " + line
	}
	return s
}

// lastLine returns the last non-empty line of s, shortened.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	line := strings.TrimSpace(lines[len(lines)-1])
	if len(line) > 120 {
		line = line[:117] + "..."
	}
	return line
}

// pids lists the PIDs of procs, for evidence.
func pids(procs []procfs.Proc) string {
	s := make([]string, len(procs))
	for i, p := range procs {
		s[i] = strconv.Itoa(p.PID)
	}
	return strings.Join(s, ",")
}

// mib formats a byte count.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
