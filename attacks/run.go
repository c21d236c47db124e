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
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
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
	if _, err := os.Stat(evidence.Python); err != nil {
		return nil, fmt.Errorf("the attack programs need %s: %w", evidence.Python, err)
	}
	if err := checkReachable(opts.TempDir); err != nil {
		return nil, err
	}
	rep := &report.Attacks{
		Identity: report.Identity{UID: os.Geteuid(), Root: sandbox.HostRoot(), ProgramUID: sandbox.HostIdentity().UID},
		Defect:   string(mutants.Active()),
		Levels:   levels,
		Expected: map[string]int{},
	}
	for _, a := range list {
		rep.Attacks = append(rep.Attacks, a.id)
		rep.Expected[a.id] = a.firstStop
	}
	for _, a := range list {
		for _, level := range levels {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			cell, err := runCell(ctx, a, level, opts.TempDir)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", report.CellName(a.id, level), err)
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

// trial is one cell in progress: the attack, its fixtures, and what the
// host saw.
type trial struct {
	attack   *attack
	policy   sandbox.Policy // the level's preset, the fake home hidden where homes are
	token    string         // tags every process of the attack (procfs.WithArg)
	fx       *fixtures
	session  *sandbox.Session
	canary   *canary
	honeypot *evidence.Honeypot
	start    time.Time
	cancel   context.CancelFunc

	// Sampled by the attack's watch while the program runs.
	seen         time.Time     // runaway_loop: when the program was first seen running
	checked      bool          // runaway_loop: seen running unkilled past the wall limit
	aliveAtCheck []procfs.Proc // those processes
	maxProcs     int           // most of its processes alive at once
	overSince    time.Time     // since when more than the cap have been alive
	overFor      time.Duration // the longest stretch over the cap
	peak         int64         // the highest VmPeak of its processes, in bytes
	peakPID      int
	maxFDs       int // the most descriptors one of its processes held
	maxFDsPID    int
	mount        *evidence.Mount // the attack's mount
	mountPID     int

	// iso is what the host saw of the program's isolation.
	iso isolation

	// Seen after the run.
	res        *sandbox.Result
	allocated  uint64        // bytes the harness allocated during the run
	allocBig   uint64        // of those, bytes in objects too big for MemStats' size classes
	aliveAfter []procfs.Proc // its processes alive when Run returned
}

// attackProcs returns the live processes of the attack program: tagged by
// the token and running Python (the sandbox's init, a Go binary whose
// arguments carry the token until it execs the program, is not one).
func (t *trial) attackProcs() []procfs.Proc { return evidence.Programs(procfs.WithArg(t.token)) }

// runCell runs one attack at one level with fresh fixtures and removes
// everything afterwards. The error is for the harness failing, never for
// the attack's outcome.
func runCell(ctx context.Context, a *attack, level int, tempDir string) (cell report.Cell, err error) {
	began := time.Now()
	cell = report.Cell{Attack: a.id, Level: level}
	fx, err := makeFixtures(tempDir)
	if err != nil {
		return cell, err
	}
	t := &trial{
		attack: a,
		fx:     fx,
		token:  procfs.Tag(),
		policy: sandbox.MustPreset(level),
	}
	v, err := t.run(ctx)
	if cerr := t.cleanup(); err == nil {
		err = cerr
	}
	if err != nil {
		return cell, err
	}
	cell.Escaped, cell.StoppedBy, cell.Evidence = v.escaped, v.stoppedBy, v.evidence
	cell.MS = time.Since(began).Milliseconds()
	return cell, nil
}

// run sets the cell up, runs the program and judges it.
func (t *trial) run(ctx context.Context) (verdict, error) {
	var err error
	if t.attack.needs&needCanary != 0 {
		if t.canary, err = startCanary(); err != nil {
			return verdict{}, err
		}
	}
	if t.attack.needs&needHoneypot != 0 {
		if t.honeypot, err = evidence.StartHoneypot(); err != nil {
			return verdict{}, err
		}
	}
	if t.policy.Filesystem.Hide != nil {
		// The fake home is hidden where the preset hides homes.
		t.policy.Filesystem.Hide = append(slices.Clone(t.policy.Filesystem.Hide), t.fx.home)
	}
	t.session, err = sandbox.NewSession(sandbox.Options{Policy: t.policy, Root: t.fx.root})
	if err != nil {
		return verdict{}, fmt.Errorf("opening session: %w", err)
	}
	args := []string{"-c", t.attack.source, t.token}
	if t.attack.args != nil {
		args = append(args, t.attack.args(t)...)
	}
	cmd := sandbox.Command{Path: evidence.Python, Args: args, Env: t.fx.env, Dir: t.fx.appDir}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	t.cancel = cancel
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	t.start = time.Now()
	stopObserver := t.startObserver()
	stopWatch := t.startWatch()
	res, runErr := t.session.Run(runCtx, cmd)
	stopWatch()
	stopObserver()
	runtime.ReadMemStats(&after)
	t.aliveAfter = t.attackProcs()

	// Judge a quiet world: nothing of the attack left running, nothing
	// more on its way to the honeypot.
	if err := t.killAll(); err != nil {
		return verdict{}, err
	}
	if err := ctx.Err(); err != nil {
		return verdict{}, err
	}
	if t.honeypot != nil {
		t.honeypot.Close()
	}
	switch {
	case res == nil && errors.Is(runErr, sandbox.ErrUnavailable):
		// Fail closed: nothing ran.
		return stopped("refused: sandbox unavailable", "%v", runErr), nil
	case res == nil:
		return verdict{}, fmt.Errorf("running the attack: %w", runErr)
	}
	// A run error with a result is the watch ending the run early.
	t.res = res
	t.fillFromPolicy()
	t.allocated = after.TotalAlloc - before.TotalAlloc
	t.allocBig = bigAllocs(&after) - bigAllocs(&before)
	return t.attack.judge(t), nil
}

// startWatch starts the attack's watch, if it has one, and returns the
// function that stops it. The watch's findings are in t once that returns.
func (t *trial) startWatch() (stop func()) {
	if t.attack.watch == nil {
		return func() {}
	}
	s := evidence.SampleUntil(t.token, watchEvery, func(now time.Time, procs []procfs.Proc) bool {
		if t.attack.watch(t, now, evidence.Programs(procs)) {
			t.cancel() // the escape is certain: end the run
			return true
		}
		return false
	})
	return s.Stop
}

// killAll kills every process tagged with the cell's token, wherever it
// went, and makes sure none is left.
func (t *trial) killAll() error {
	procfs.KillWithArg(t.token, killLimit)
	if left := procfs.WithArg(t.token); len(left) > 0 {
		return fmt.Errorf("killing the attack's processes: %d survive (pids %s)", len(left), pids(left))
	}
	return nil
}

// cleanup removes everything the cell made: its processes, the canary, the
// honeypot, the session and the fixtures.
func (t *trial) cleanup() error {
	errs := []error{t.killAll()}
	if t.canary != nil {
		t.canary.stop()
	}
	if t.honeypot != nil {
		t.honeypot.Close()
	}
	if t.session != nil {
		if err := t.session.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing session: %w", err))
		}
	}
	errs = append(errs, t.fx.remove())
	return errors.Join(errs...)
}

// bigAllocs returns the bytes ever allocated in objects larger than the
// size classes MemStats lists (about 19 KiB and up): where a stream would
// hold output. The sandbox's process monitor allocates a little on every
// walk of /proc, in small objects only; leaving those out keeps a slow run
// at L3 from looking like held output.
func bigAllocs(m *runtime.MemStats) uint64 {
	small := uint64(0)
	for _, c := range m.BySize {
		small += uint64(c.Size) * c.Mallocs
	}
	return m.TotalAlloc - small
}

// output is everything the program's output brought back to the host.
func (t *trial) output() string { return t.res.Stdout + "\n" + t.res.Stderr }

// layer names the mechanism that stopped the attack when the layer that
// should have stopped it was on; otherwise the stop was not the one
// expected, and the verdict says what was seen instead.
func (t *trial) layer(on bool, mechanism, format string, args ...any) verdict {
	v := stopped(mechanism, format, args...)
	if !on {
		v.stoppedBy = "unexpected: " + ended(t.res)
	}
	if !t.iso.seen {
		v.evidence += notSeen
	}
	return v
}

// programLayer is layer for a mechanism the host sees only in the program
// itself after the init has execed it (capabilities, mounts).
func (t *trial) programLayer(on bool, mechanism, format string, args ...any) verdict {
	v := t.layer(on, mechanism, format, args...)
	if t.iso.seen && !t.iso.programSeen {
		v.evidence += notSeen
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
