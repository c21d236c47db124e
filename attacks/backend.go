package attacks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"sandboxlab/attacks/backends"
	"sandboxlab/report"
	"sandboxlab/sandbox"
	"sandboxlab/sandbox/cleanup"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
)

// The backend adapter: a profile of another sandbox (backends.Profile)
// made ready to run, its probe, and one attack cell run under it and
// judged by the same host-side evidence as at sandboxlab's own levels.

// outputMax is the most the harness keeps of a backend's stream: more
// than the output flood writes, so that what came back is what the
// program wrote.
const outputMax = 64 << 20

// backend is a profile made ready to run: its column opened (the
// executable found, the identities it starts as and runs the program as,
// what its driver shares across runs), and what the probe found.
type backend struct {
	prof *backends.Profile
	col  *backends.Column
	// watchdog is the harness's bound on each run.
	watchdog time.Duration
	// hostRoot: the probe saw the program with host root privileges (or
	// could not see it, and the backend starts as host root).
	hostRoot bool
	// visible: the host saw the probe's program.
	visible bool
}

// readyBackend readies profile p and probes it, filling in what col
// says of the backend. It returns nil, with the reason in col.Skipped,
// when the column is skipped; otherwise the caller closes the backend.
func readyBackend(ctx context.Context, p *backends.Profile, col *report.Sandbox, tempDir string) (*backend, error) {
	b := &backend{prof: p, watchdog: p.Limit()}
	col.About, col.Command, col.WatchdogMS = p.About, p.Command, b.watchdog.Milliseconds()
	c, skip, err := backends.OpenColumn(p, backends.ColumnOptions{
		Program: backends.Identity(sandbox.HostIdentity()), Root: sandbox.HostRoot(), TempDir: tempDir})
	if err != nil {
		return nil, err
	}
	if skip != "" {
		col.Skipped = skip
		return nil, nil
	}
	b.col = c
	pr, err := b.probe(ctx, tempDir)
	if err == nil && pr.failed != "" && c.Fallback(pr.failed) {
		pr, err = b.probe(ctx, tempDir) // the slower way (a guest under TCG)
	}
	col.About = strings.Join(append([]string{p.About}, c.Notes...), "; ")
	if err != nil || pr.failed != "" {
		col.Held, col.StartMS, col.Skipped = pr.held, pr.startMS, pr.failed
		return nil, errors.Join(err, b.close())
	}
	col.Held, col.StartMS, col.HostRoot = pr.held, pr.startMS, pr.hostRoot
	b.hostRoot, b.visible = pr.hostRoot, pr.visible
	return b, nil
}

// close removes what the backend's column made (a throw-away user, a
// guest's kernel and initrd).
func (b *backend) close() error { return b.col.Close() }

// startsAsRoot reports whether the backend starts with host root
// privileges.
func (b *backend) startsAsRoot() bool { return b.col.Starter.UID == 0 }

// start makes what one run of the program (args after the interpreter)
// needs under the backend, in workdir with fx's fixtures, registers its
// removal with undo (before the fixtures go), and starts it.
func (b *backend) start(fx *fixtures, workdir, token string, args []string, undo *cleanup.Stack) (*backends.Run, error) {
	scratch, err := os.MkdirTemp(fx.root, backendScratch)
	if err != nil {
		return nil, fmt.Errorf("making the run's scratch directory: %w", err)
	}
	// The backend's own temporary files (gVisor's runsc keeps its state
	// in $TMPDIR) go with the cell's fixtures, so that a backend the
	// watchdog kills leaves nothing behind.
	env := append(slices.Clone(fx.env), "TMPDIR="+filepath.Join(fx.root, backendTmp))
	in, err := b.col.Prepare(backends.RunSpec{Program: append([]string{evidence.Python}, args...), Workdir: workdir, Home: fx.home,
		Dir: fx.appDir, Env: env, Scratch: scratch, Token: token, OutputMax: outputMax})
	if err != nil {
		return nil, err
	}
	undo.AddErr(in.Close)
	return backends.Start(in.Launch)
}

// The backend's directories below a cell's fixtures: its temporary
// directory, and each run's scratch (a container's root and state, a
// guest's job directory).
const (
	backendTmp     = "backend-tmp"
	backendScratch = "backend-run-"
)

// prepare makes what a run under the backend needs beyond the cell's
// fixtures, and hands everything of the program's to the identity the
// backend runs it as, when that is not sandboxlab's own: a fixture
// belongs to the identity the program has, or the uid mapping, not the
// sandbox, would stop the attack.
func (b *backend) prepare(fx *fixtures) error {
	tmp := filepath.Join(fx.root, backendTmp)
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return fmt.Errorf("making the backend's temporary directory: %w", err)
	}
	start := b.col.Starter
	if err := os.Lchown(tmp, start.UID, start.GID); err != nil {
		return fmt.Errorf("handing %s to uid %d: %w", tmp, start.UID, err)
	}
	from, to := sandbox.HostIdentity(), b.col.Program
	if backends.Identity(from) == to {
		return nil
	}
	return filepath.WalkDir(fx.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) == from.UID {
			if err := os.Lchown(p, to.UID, to.GID); err != nil {
				return fmt.Errorf("handing %s to uid %d: %w", p, to.UID, err)
			}
		}
		return nil
	})
}

// probeResult is what the probe found.
type probeResult struct {
	// failed says why the backend is not used ("" when it ran the probe).
	failed string
	// startMS is the wall time of a program that prints a line and exits.
	startMS int64
	// hostRoot: the program had host root privileges; visible: the host
	// saw it.
	hostRoot, visible bool
	held              string
}

// probeSource prints the nonce it is given and stays a moment, so that
// the host can see who it runs as.
const probeSource = "import sys, time; print(sys.argv[2], flush=True); time.sleep(float(sys.argv[3]))"

// probeStay is how long the probe stays for the host to look at it.
const probeStay = "0.3"

// probe runs a harmless program under the backend twice, with fresh
// fixtures: once staying a moment, for the host to see whether the
// program has host root privileges (with euid 0 in the harness's user
// namespace; where the host cannot see it, whether the backend starts as
// root), and once exiting at once, for the cost of a start. A backend
// that does not return the nonce on either run is not used. A virtual
// machine's program is out of the host's sight and never has host
// privileges: only the second run, a boot, is made.
func (b *backend) probe(ctx context.Context, tempDir string) (probeResult, error) {
	var pr probeResult
	stays := []string{probeStay, "0"}
	if b.col.Guest {
		stays = stays[1:]
	}
	for _, stay := range stays {
		fx, err := makeFixtures(tempDir)
		if err != nil {
			return pr, err
		}
		out, ran, seen, root, err := b.probeOnce(ctx, fx, stay)
		if rerr := fx.remove(); err == nil {
			err = rerr
		}
		if err != nil {
			return pr, err
		}
		pr.held = out.Held
		if !ran {
			pr.failed = "it did not run the harness's probe program: " + describe(out)
			return pr, nil
		}
		if stay == probeStay {
			pr.hostRoot = root || !seen && b.startsAsRoot()
			pr.visible = seen
		} else {
			pr.startMS = out.Wall.Milliseconds()
		}
	}
	return pr, nil
}

// probeOnce runs the probe in fx and reports what came out, whether the
// nonce came back, whether the host saw the program, and whether it had
// host root privileges.
func (b *backend) probeOnce(ctx context.Context, fx *fixtures, stay string) (out *backends.Outcome, ran, seen, root bool, err error) {
	var undo cleanup.Stack
	defer func() {
		if cerr := undo.Clean(); err == nil && cerr != nil {
			out, err = nil, fmt.Errorf("probing: %w", cerr)
		}
	}()
	if err := b.prepare(fx); err != nil {
		return nil, false, false, false, err
	}
	token := procfs.Tag()
	nonce := "probe-" + randomHex(8)
	since := b.lookout()
	r, err := b.start(fx, fx.appDir, token, []string{"-c", probeSource, token, nonce, stay}, &undo)
	if err != nil {
		return nil, false, false, false, fmt.Errorf("probing: %w", err)
	}
	var sawRoot atomic.Bool
	stop := watchProgram(r.PID(), token, since, b.spin(), func(pid int) bool {
		st, err := evidence.ReadStatus(pid)
		if err != nil {
			return false
		}
		uid := strings.Fields(st.Field("Uid"))
		mine, _ := os.Readlink("/proc/self/ns/user")
		its, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/user")
		if len(uid) < 2 || its == "" {
			return false
		}
		hostNS := its == mine
		sawRoot.Store(hostNS && (uid[1] == "0" || st.Hex("CapEff") != 0))
		return true
	})
	out, err = r.Wait(ctx)
	seen = stop()
	procfs.KillWithArg(token, killLimit)
	if err != nil {
		return nil, false, false, false, fmt.Errorf("probing: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, false, false, false, err
	}
	return out, strings.Contains(string(out.Stdout), nonce), seen, sawRoot.Load(), nil
}

// describe says briefly how a backend's run ended, for a skipped column.
func describe(o *backends.Outcome) string {
	s := "exit status " + strconv.Itoa(o.ExitCode)
	if o.Signal != "" {
		s = "killed by " + o.Signal
	}
	if o.StoppedBy != "" {
		s += ", stopped by the harness (" + o.StoppedBy + ")"
	}
	if line := lastLine(string(o.Stderr)); line != "" {
		s += ": " + line
	}
	return s
}

// startMarker tags the first line a backend's program writes on its
// error stream, before the attack's own code runs: the evidence that the
// program started, so that a backend that failed to run it is never
// mistaken for one that stopped the attack. The harness removes it
// before the judge reads the output.
func startMarker(token string) string { return "sandboxlab: started " + token + "\n" }

// withMarker is the attack's source with the marker written first, on
// the source's first line, so that the line numbers of a traceback do not
// change.
func withMarker(source, token string) string {
	return fmt.Sprintf("import sys as _sbx;_sbx.stderr.write(%q);_sbx.stderr.flush();del _sbx;", startMarker(token)) + source
}

// cell is attack a's cell in the backend's column: n/a with the reason
// when the attack does not apply there, or may not run there as host
// root; run (runCell) otherwise.
func (b *backend) cell(ctx context.Context, a *spec, column, tempDir string) (report.SandboxCell, error) {
	c := report.SandboxCell{Attack: a.id, Sandbox: column, State: report.NotApplicable}
	switch {
	case a.elsewhere.na != "":
		c.Evidence = "not run: " + a.elsewhere.na
	case evidence.Lacks(a.needs) != "":
		c.Evidence = "not run: " + evidence.Lacks(a.needs)
	case b.hostRoot && !a.elsewhere.harmlessAsRoot:
		c.Evidence = "not run: the program has host root privileges under this sandbox, and this attack is not harmless by construction there"
		if a.elsewhere.rootRisk != "" {
			c.Evidence += ": " + a.elsewhere.rootRisk
		}
	case b.col.Guest && guestNA(a, b.col.GuestLimits) != "":
		c.Evidence = "not run: " + guestNA(a, b.col.GuestLimits)
	default:
		var err error
		onOwnThread(func() { c, err = b.runCell(ctx, a, column, tempDir) })
		return c, err
	}
	return c, nil
}

// runCell runs attack s under the backend with fresh fixtures and a fresh
// state, and removes everything afterwards. The error is for the harness
// failing (processes it could not end), never for the attack's outcome.
func (b *backend) runCell(ctx context.Context, s *spec, column, tempDir string) (report.SandboxCell, error) {
	began := time.Now()
	cell := report.SandboxCell{Attack: s.id, Sandbox: column}
	fx, err := makeFixtures(tempDir)
	if err != nil {
		return cell, err
	}
	// No policy of sandboxlab's: the backend is the whole sandbox, and a
	// layer is named only from what the host saw of the program (shape
	// marks a cell whose program it never saw; no unseen note here).
	e := &env{fx: fx, token: procfs.Tag(), policy: sandbox.Policy{}}
	a := s.new()
	v, run, err := e.runOn(ctx, b, s, a)
	if cerr := e.cleanup(); err == nil {
		err = cerr
	}
	if err != nil {
		return cell, err
	}
	cell.State, cell.Mechanism, cell.Evidence = b.shape(s, a, e, v, run)
	cell.MS = time.Since(began).Milliseconds()
	return cell, nil
}

// lookout returns, for a detached backend, what the host's processes are
// before a start, for watchProgram to look among those started since;
// nil for a backend whose program is among its own descendants.
func (b *backend) lookout() *procfs.Newcomers {
	if !b.col.Detached {
		return nil
	}
	return procfs.NewNewcomers()
}

// spin is how long watchProgram looks for a visible program without
// pause. A detached backend's start takes a time of its own before the
// program runs (rootless podman: 0.5 to 2 s on a loaded machine), which
// a fixed spin from the start does not cover, and a thread that spins
// for seconds beside busy ones is itself preempted for 100 ms at a time:
// under load both missed a program that failed within tens of
// milliseconds. So the host does not spin there, and polls every
// millisecond instead; a thread that sleeps between looks is woken
// promptly, and each look is cheap, since Newcomers reads only the
// processes started since.
func (b *backend) spin() time.Duration {
	if b.col.Detached {
		return 0
	}
	return observeLimit
}

// backendRun is what the harness saw of a run under a backend, beside
// what the judge reads.
type backendRun struct {
	// startErr: the backend could not be started at all.
	startErr error
	out      *backends.Outcome
	// started: the program's start marker came back.
	started bool
}

// runOn sets the cell up for attack a (whose program is s's), runs the
// program under the backend and judges it, as env.run does at
// sandboxlab's levels.
func (e *env) runOn(ctx context.Context, b *backend, s *spec, a attack) (verdict, backendRun, error) {
	var run backendRun
	args, err := e.setUpOn(b, s, a)
	if err != nil {
		return verdict{}, run, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	m, measures := a.(measurer)
	if measures {
		m.beforeRun(e)
	}
	since := b.lookout()
	r, err := b.start(e.fx, e.session.Dir(), e.token, args, &e.undo)
	if err != nil {
		if measures {
			m.afterRun(e)
		}
		run.startErr = err
		return verdict{}, run, nil
	}
	spin := time.Duration(0)
	if b.visible {
		spin = b.spin()
	}
	stopObserver := watchProgram(r.PID(), e.token, since, spin, func(pid int) bool {
		e.readProcess(pid)
		if e.iso.seen {
			e.readProgram(pid)
		}
		return e.iso.seen
	})
	stopWatch := e.startWatch(a, cancel)
	out, waitErr := r.Wait(runCtx)
	stopWatch()
	stopObserver()
	if measures {
		m.afterRun(e)
	}
	run.out = out
	e.noteAliveAfter(out)
	if err := e.killAll(); err != nil {
		return verdict{}, run, err
	}
	if waitErr != nil {
		return verdict{}, run, waitErr
	}
	if err := ctx.Err(); err != nil {
		return verdict{}, run, err
	}
	e.res, run.started = result(out, startMarker(e.token))
	return a.judge(e), run, nil
}

// setUpOn runs a's setup, opens the session and hands the fixtures to
// the backend's identity, and returns the program's arguments after the
// interpreter.
func (e *env) setUpOn(b *backend, s *spec, a attack) ([]string, error) {
	if su, ok := a.(setupper); ok {
		if err := su.setup(e); err != nil {
			return nil, err
		}
	}
	var err error
	// The session is the program's working directory ({workdir}); only
	// the backend runs in it.
	e.session, err = e.newSession(e.policy)
	if err != nil {
		return nil, fmt.Errorf("opening session: %w", err)
	}
	if err := b.prepare(e.fx); err != nil {
		return nil, err
	}
	args := []string{"-c", withMarker(s.source, e.token), e.token}
	if ar, ok := a.(arguer); ok {
		args = append(args, ar.args(e)...)
	}
	return args, nil
}

// noteAliveAfter records what of the program was alive when the run
// ended, wherever it went: what the backend's launch left behind, and
// what the host still finds by the token.
func (e *env) noteAliveAfter(out *backends.Outcome) {
	for _, l := range out.Left {
		if len(l.Args) > 0 && l.Args[0] == evidence.Python && slices.Contains(l.Args, e.token) {
			e.aliveAfter = append(e.aliveAfter, l.Proc)
		}
	}
	for _, p := range e.attackProcs() {
		if !slices.ContainsFunc(e.aliveAfter, func(q procfs.Proc) bool { return q.PID == p.PID }) {
			e.aliveAfter = append(e.aliveAfter, p)
		}
	}
}

// result is the Result a judge reads, from a backend's outcome, with the
// start marker taken out of the output; it reports whether the marker was
// there.
func result(o *backends.Outcome, marker string) (*sandbox.Result, bool) {
	stdout, stderr := string(o.Stdout), string(o.Stderr)
	outBytes, errBytes := o.StdoutBytes, o.StderrBytes
	started := false
	if i := strings.Index(stderr, marker); i >= 0 {
		stderr, errBytes, started = stderr[:i]+stderr[i+len(marker):], errBytes-int64(len(marker)), true
	} else if i := strings.Index(stdout, marker); i >= 0 { // a backend that joins the streams
		stdout, outBytes, started = stdout[:i]+stdout[i+len(marker):], outBytes-int64(len(marker)), true
	}
	r := &sandbox.Result{
		Level: -1, Reason: sandbox.ReasonExited, ExitCode: o.ExitCode, Signal: o.Signal,
		Stdout: stdout, Stderr: stderr, StdoutBytes: outBytes, StderrBytes: errBytes,
		Wall: o.Wall, CPU: o.CPU, MemoryPeak: o.MemoryPeak,
	}
	if o.Signal != "" || o.StoppedBy != "" {
		// Not the sandbox's limits: the backend's process was killed (by
		// a signal of its own, or the harness's).
		r.Reason, r.ExitCode = sandbox.ReasonSignal, -1
	}
	return r, started
}

// unseenNote marks the evidence of a cell whose program the host never
// saw: no mechanism is named from what it could not look at.
const unseenNote = " (the host saw no process of the program under this sandbox, so no mechanism is named)"

// shape turns the judge's verdict on a backend's cell into the cell's
// state, mechanism and evidence, with what only the harness knows: that
// the backend could not start, that the program never started, that the
// host could not see the program an attack's evidence is in, or that the
// harness's watchdog had to end the run.
func (b *backend) shape(s *spec, a attack, e *env, v verdict, run backendRun) (report.CellState, string, string) {
	if run.startErr != nil {
		return report.NotApplicable, "", "not judged: the sandbox could not be started: " + run.startErr.Error()
	}
	g := run.out.Guest
	if ev, ok := guestRunaway(s, run.out, run.started); ok {
		return report.Escaped, "", ev + guestNote(g, false)
	}
	state, mechanism, ev := b.shapeCell(s, a, e, v, run)
	if g != nil {
		ev += guestNote(g, state == report.Stopped && !e.iso.seen)
	}
	return state, mechanism, ev
}

// shapeCell is shape for what every backend has in common.
func (b *backend) shapeCell(s *spec, a attack, e *env, v verdict, run backendRun) (report.CellState, string, string) {
	o := run.out
	stoppedAfter := ""
	if o.StoppedBy == backends.StopWatchdog {
		stoppedAfter = fmt.Sprintf("the sandbox had not ended the run when the harness's watchdog stopped it after %d ms", o.Wall.Milliseconds())
	}
	_, watches := a.(watcher)
	_, names := a.(namer)
	switch {
	case s.elsewhere.keepsRunning && o.StoppedBy == backends.StopWatchdog && run.started:
		ev := fmt.Sprintf("no limit: stopped by the harness watchdog after %d ms", o.Wall.Milliseconds())
		if v.escaped {
			ev += "; " + v.evidence
		}
		return report.Escaped, "", ev
	case v.escaped:
		ev := v.evidence
		if s.elsewhere.keepsRunning && o.StoppedBy == backends.StopCancelled {
			ev += "; no limit of the sandbox's own: the harness stopped it"
		} else if stoppedAfter != "" {
			ev += "; " + stoppedAfter
		}
		return report.Escaped, "", ev
	case !run.started:
		return report.NotApplicable, "", "not judged: the program did not start under this sandbox (" + describe(o) + ")"
	case watches && !names && !e.iso.seen:
		return report.NotApplicable, "", "not judged: the host saw no process of the program under this sandbox, and this attack's evidence is in those processes"
	}
	mechanism, ev := v.stoppedBy, v.evidence
	if rest, unnamed := strings.CutPrefix(mechanism, "unexpected: "); unnamed {
		if line := lastLine(e.res.Stderr); line != "" && strings.Contains(ev, line) {
			rest = strings.TrimSuffix(rest, ", "+line) // said already
		}
		mechanism, ev = "", ev+"; it ended: "+rest
	}
	if !e.iso.seen {
		mechanism = ""
		if o.Guest == nil {
			ev += unseenNote // a guest's cell says why in its own words
		}
	}
	if stoppedAfter != "" {
		ev += "; " + stoppedAfter
	}
	return report.Stopped, mechanism, ev
}
