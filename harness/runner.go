package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"sandboxlab/mutants"
	"sandboxlab/report"
	"sandboxlab/verdict"
)

// WorkerResult is a run of the checks and the attack matrix with one
// defect switched on (none for the baseline), put together from its
// probes' results.
type WorkerResult struct {
	Checks  *report.Checks  `json:"checks"`
	Attacks *report.Attacks `json:"attacks"`
}

// Progress describes the runner's state after the baseline, a probe or a
// defect finished.
type Progress struct {
	// Done and Total count the defects (Total is known from the end of the
	// baseline on; Done stays 0 until then).
	Done, Total int
	// ProbesDone and ProbesTotal count the probe runs of the phase under
	// way: the baseline's, then the defects'.
	ProbesDone, ProbesTotal int
	// Phase is the phase under way: PhaseBaseline, PhaseDefects or
	// PhaseMasking.
	Phase string
	// Defect is the defect that just finished (zero for a probe's end).
	Defect  report.Defect
	Elapsed time.Duration
}

// The phases of a run, in order.
const (
	PhaseBaseline = "baseline"
	PhaseDefects  = "defects"
	PhaseMasking  = "masking"
)

// Runner runs the baseline and then each defect, probe by probe, each
// probe in a worker process of its own, and diffs the results against the
// predictions.
//
// The baseline runs every probe of the run's suites on the correct
// sandbox and records which planted sites each one reaches (in every
// process it involves). A defect then runs only the probes that reach its
// site (unless NoSelect): the others cannot behave differently with it on,
// and keep their baseline verdict. A defect no probe reaches runs nothing
// and is reported as not reached.
//
// Each defect is judged by the checks and attacks of its own suite only,
// and its new escapes are those of the suite's cells that the baseline
// stops. The baseline is judged suite by suite: a suite whose baseline is
// broken runs none of its defects, the others run theirs. So a course
// defect's outcome is the course's measure of it, whatever the hardening
// suite holds.
type Runner struct {
	// Worker returns the command for one task: a worker that runs the
	// task's probe and prints one ProbeResult in JSON on its standard
	// output.
	Worker func(ctx context.Context, t Task) *exec.Cmd
	// Predictions are what the runs are compared with; their universe
	// gives the defects to run, the probes and the suite of every id.
	Predictions *Predictions
	// Suites lists the suites to run (all when empty).
	Suites []verdict.Suite
	// Only lists the defects to run (all of the suites when empty); the
	// run then keeps only the suites of those defects.
	Only []string
	// Shard runs only a stable slice of the defects (zero: all of them),
	// cut by ShardTimes when set.
	Shard      Shard
	ShardTimes *ShardTimes
	// NoSelect runs every probe of its suite for every defect, reached or
	// not.
	NoSelect bool
	// Repeat runs every probe this many times (0 or 1: once); a probe
	// whose verdict changes between repeats is reported as flaky.
	Repeat int
	// Masking searches, after the defects, for layers that hide a defect
	// from a probe that reaches it (see findMasks).
	Masking bool
	// Idle, if set, reports whether a probe's program busy-loops at the
	// lowest priority, its CPU no part of its verdict: such a probe weighs
	// little in the pool (see idleWeight).
	Idle func(probe string) bool
	// Jobs is how many probes run at once, at most; Cores is how many
	// CPUs their expected load may add up to (see pool).
	Jobs  int
	Cores float64
	// Timeout bounds one probe's run; a probe past it is killed and its
	// defect reported as hung.
	Timeout time.Duration
	// FailOn is the gate's policy.
	FailOn verdict.FailOn
	// Progress, if set, is called after the baseline, each probe and each
	// defect, from one goroutine at a time.
	Progress func(Progress)
	// Identity goes into the report.
	Identity report.Identity
	// Build identifies the binary that runs the probes (for merging
	// shards); PredictionsDigest the predictions file.
	Build, PredictionsDigest string
	// Inputs digests what the probes' verdicts depend on (ComputeInputs);
	// the report records them, so that a later run can reuse its
	// verdicts. Nil: none recorded.
	Inputs *report.Inputs
	// Previous, if set, is an earlier run's report whose verdicts are
	// reused where every input they depend on is unchanged (mutate
	// --incremental; see reuse): only the rest runs.
	Previous *report.Mutation
	// Since, if set, runs only the defects a diff touches (mutate
	// --since): a partial run, whose gate covers only what ran.
	Since *Since

	// stops gathers the run's timeouts (set by Run).
	stops *stops
	// costs adds up where each phase's time went, over one Run.
	costs *costs
}

// Shard is the K-th of N stable slices of the defects (1 <= K <= N).
type Shard struct{ K, N int }

// String is "k/n", or "" for no sharding.
func (s Shard) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

// ParseShard reads "k/n".
func ParseShard(s string) (Shard, error) {
	var sh Shard
	if _, err := fmt.Sscanf(s, "%d/%d", &sh.K, &sh.N); err != nil || fmt.Sprintf("%d/%d", sh.K, sh.N) != s {
		return Shard{}, fmt.Errorf("want k/n (such as 2/3), got %q", s)
	}
	if sh.N < 1 || sh.K < 1 || sh.K > sh.N {
		return Shard{}, fmt.Errorf("want 1 <= k <= n, got %s", s)
	}
	return sh, nil
}

// has reports whether the defect at index i (in registry order among the
// run's) is in the shard. Every N-th defect: a stable slice, and each
// shard gets its share of the slow ones, which sit together in the
// registry.
func (s Shard) has(i int) bool { return s.N == 0 || i%s.N == s.K-1 }

// Run runs everything and returns the report. The error is for what
// stops the whole run (an interrupt); a broken baseline is a report with
// Baseline.OK false and no defects.
func (r *Runner) Run(ctx context.Context) (*report.Mutation, error) {
	start := time.Now()
	list, suites, err := r.selection()
	if err != nil {
		return nil, err
	}
	list = r.shardOf(list)
	m := &report.Mutation{Identity: r.Identity, Jobs: r.Jobs, Defects: []report.Defect{}}
	probes := r.Predictions.u.probes(suites)
	var ru *reuse
	if r.Previous != nil {
		ru = r.planReuse(r.Previous, probes)
	}
	cores := r.Cores
	if cores <= 0 {
		cores = float64(runtime.NumCPU())
	}
	pl := newPool(r.Jobs, cores)
	r.stops, r.costs = newStops(), newCosts()
	defer func() { r.stops, r.costs = nil, nil }()
	watch, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go pl.watchNeighbours(watch)
	prog := &progressor{fn: r.Progress, start: start}

	var base *baseRun
	var baseErr error
	r.costs.timed(report.PhaseBaseline, func() { base, baseErr = r.runBaseline(ctx, pl, probes, prog, ru) })
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	m.Baseline, m.Suites = r.judgeBaseline(suites, list, base.work, baseErr)
	m.Run = &report.RunInfo{Selection: !r.NoSelect, Repeat: max(1, r.Repeat), Shard: r.Shard.String(), ShardTimes: r.ShardTimes.digest(),
		Suites: suites, Build: r.Build, Predictions: r.PredictionsDigest, BaselineProbeRuns: base.runs, Coverage: base.coverage,
		ID: newRunID(start), Started: start.UTC().Format(time.RFC3339), Inputs: r.Inputs}
	m.Flaky = append(m.Flaky, base.flaky...)
	var run []mutants.Defect
	for _, d := range list {
		if res, ok := m.SuiteResult(d.Suite.OrCourse()); ok && res.BaselineOK {
			run = append(run, d)
		}
	}
	if r.Since != nil {
		run, m.Run.Partial = r.Since.filter(list, run, probes, base)
	}
	if len(run) > 0 {
		r.costs.timed(report.PhaseDefects, func() { m.Defects = r.runDefects(ctx, pl, run, probes, base, m, prog, ru) })
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if r.Masking {
			r.costs.timed(report.PhaseMasking, func() { m.Masking = r.findMasks(ctx, pl, m.Defects, base, prog) })
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
	}
	if ru != nil {
		m.Run.Reused = ru.summary(m, base.reused)
	}
	m.Run.KillLate, m.Run.Starved = r.stops.report()
	m.Run.Timing = r.costs.report()
	finish(m, r.FailOn)
	m.MS = time.Since(start).Milliseconds()
	return m, nil
}

// progressor calls the Progress function one call at a time.
type progressor struct {
	fn    func(Progress)
	start time.Time
	mu    sync.Mutex
	p     Progress
}

func (p *progressor) update(f func(*Progress)) {
	if p.fn == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	f(&p.p)
	p.p.Elapsed = time.Since(p.start)
	p.fn(p.p)
	p.p.Defect = report.Defect{}
}

// finish counts the outcomes and decides the gates: each suite's, and
// the run's, which fails when any suite's does.
func finish(m *report.Mutation, failOn verdict.FailOn) {
	m.FailOn = failOn
	m.Tally()
	for i := range m.Suites {
		s := &m.Suites[i]
		s.Gate = failOn.Decide(s.BaselineOK, s.Summary.Unexpected, s.Summary.UnexpectedEscapes, len(m.FlakesIn(s.Suite)))
	}
	m.Gate = failOn.Decide(m.Baseline.OK, m.Summary.Unexpected, m.Summary.UnexpectedEscapes, len(m.Flaky))
}

// Rejudge diffs the facts of an earlier run (a report of 'mutate', read
// back from its JSON) against preds, without running anything: what
// failed and what escaped stay as measured, the verdicts follow the
// predictions. It is how an edit of predictions.yaml is tried out, and how
// the gate's answers to such edits are tested.
func Rejudge(prev *report.Mutation, preds *Predictions, failOn verdict.FailOn) (*report.Mutation, error) {
	if prev.Baseline.Checks == nil || prev.Baseline.Attacks == nil {
		return nil, errors.New("the report has no baseline to compare with (was the baseline broken?)")
	}
	m := &report.Mutation{Identity: prev.Identity, Jobs: prev.Jobs, MS: prev.MS, Defects: []report.Defect{},
		Run: prev.Run, Masking: prev.Masking}
	for _, f := range prev.Flaky {
		if f.Defect == "" {
			m.Flaky = append(m.Flaky, f)
		}
	}
	suites := prevSuites(prev)
	var problems map[verdict.Suite][]string
	m.Baseline, problems = judgeBaselineReports(preds, suites, prev.Baseline.Checks, prev.Baseline.Attacks, prev.Baseline.MS)
	m.Suites = suiteResults(suites, problems)
	for _, pd := range prev.Defects {
		d, err := preds.Defect(pd.ID)
		if err != nil {
			return nil, err
		}
		f := facts{failed: pd.FailedChecks, newEscapes: pd.EscapedAttacks, ms: pd.MS, seen: map[string]report.Seen{},
			na: naCells(prev.Baseline.Attacks)}
		if pd.Outcome == verdict.Untestable {
			f.untestable = pd.Error
		}
		// Only what the earlier run explained is known of its probes.
		for _, s := range pd.Seen {
			f.seen[s.Probe] = s
		}
		if pd.Outcome.NoVerdict() {
			f.err, f.hung = errors.New(pd.Error), pd.Outcome == verdict.Hung
		}
		out := judgeFacts(preds, d, f)
		out.Reached, out.NotReached, out.Probes, out.Flaky, out.Reuse = pd.Reached, pd.NotReached, pd.Probes, pd.Flaky, pd.Reuse
		m.Defects = append(m.Defects, out)
		m.Flaky = append(m.Flaky, pd.Flaky...)
	}
	finish(m, failOn)
	return m, nil
}

// ExitCode maps the report to its exit code: the gate holds, an
// unexpected escape, another divergence (only with --fail-on any), or a
// broken baseline.
func ExitCode(m *report.Mutation) int {
	switch {
	case !m.Baseline.OK:
		return verdict.ExitBaseline
	case m.Gate == verdict.Pass:
		return verdict.ExitOK
	case m.Summary.UnexpectedEscapes > 0:
		return verdict.ExitEscape
	case len(m.Flaky) > 0:
		return verdict.ExitFlaky
	}
	return verdict.ExitDivergence
}

// prevSuites returns the suites an earlier run had members of, in report
// order (a report from before suites: the course).
func prevSuites(prev *report.Mutation) []verdict.Suite {
	has := map[verdict.Suite]bool{}
	for _, r := range prev.Suites {
		has[r.Suite.OrCourse()] = true
	}
	for _, d := range prev.Defects {
		has[d.Suite.OrCourse()] = true
	}
	for _, c := range prev.Baseline.Checks.Checks {
		has[c.Suite.OrCourse()] = true
	}
	for _, a := range prev.Baseline.Attacks.Attacks {
		has[prev.Baseline.Attacks.SuiteOf(a)] = true
	}
	var out []verdict.Suite
	for _, s := range verdict.Suites {
		if has[s] {
			out = append(out, s)
		}
	}
	return out
}

// selection returns the defects to run, in registry order, and the
// suites of the run: those selected, or with Only those of the defects
// named. An id of Only that names no defect, or one of a suite not
// selected, is an error.
func (r *Runner) selection() ([]mutants.Defect, []verdict.Suite, error) {
	want := map[string]bool{}
	for _, id := range r.Only {
		d, err := r.Predictions.Defect(id)
		if err != nil {
			return nil, nil, fmt.Errorf("%w (known: %s)", err, strings.Join(mutants.IDs(), ", "))
		}
		if !d.Suite.In(r.Suites) {
			return nil, nil, fmt.Errorf("defect %s is in the %s suite, which is not selected (suites: %s)", id, d.Suite, verdict.SuiteList(r.Suites))
		}
		want[id] = true
	}
	var list []mutants.Defect
	named := map[verdict.Suite]bool{}
	for _, d := range r.Predictions.Planted() {
		if d.Suite.In(r.Suites) && (len(want) == 0 || want[string(d.ID)]) {
			list = append(list, d)
			named[d.Suite.OrCourse()] = true
		}
	}
	var suites []verdict.Suite
	for _, s := range verdict.Suites {
		if s.In(r.Suites) && (len(want) == 0 || named[s]) {
			suites = append(suites, s)
		}
	}
	return list, suites, nil
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// judgeBaseline checks the correct sandbox, suite by suite: every check
// passes and each attack is first stopped at the predicted level. It
// returns the baseline and the share of each suite of the run that has
// members (a defect to run, a check or an attack).
func (r *Runner) judgeBaseline(suites []verdict.Suite, list []mutants.Defect, w workResult, err error) (report.Baseline, []report.SuiteResult) {
	var members []verdict.Suite
	for _, s := range suites {
		has := r.Predictions.Members(s)
		for _, d := range list {
			has = has || d.Suite.OrCourse() == s
		}
		if w.result != nil {
			has = has || len(w.result.Checks.InSuite(s).Checks) > 0 || len(w.result.Attacks.InSuite(s).Attacks) > 0
		}
		if has {
			members = append(members, s)
		}
	}
	if err != nil {
		b := report.Baseline{Expected: expectedIn(r.Predictions, suites), MS: w.ms}
		b.Problems = []string{"the baseline run failed: " + err.Error()}
		problems := map[verdict.Suite][]string{}
		for _, s := range members {
			problems[s] = b.Problems
		}
		return b, suiteResults(members, problems)
	}
	b, problems := judgeBaselineReports(r.Predictions, suites, w.result.Checks, w.result.Attacks, w.ms)
	return b, suiteResults(members, problems)
}

// suiteResults returns the share of each of suites in the baseline: ok
// when it has no problem. The summaries and gates are filled later.
func suiteResults(suites []verdict.Suite, problems map[verdict.Suite][]string) []report.SuiteResult {
	var out []report.SuiteResult
	for _, s := range suites {
		p := problems[s]
		if p == nil {
			p = []string{}
		}
		out = append(out, report.SuiteResult{Suite: s, BaselineOK: len(p) == 0, Problems: p})
	}
	return out
}

// expectedIn returns the predicted first stops of the attacks of suites.
func expectedIn(preds *Predictions, suites []verdict.Suite) map[string]int {
	out := map[string]int{}
	for a, l := range preds.Baseline.Attacks {
		if preds.AttackSuite(a).In(suites) {
			out[a] = l
		}
	}
	return out
}

// judgeBaselineReports judges the baseline's checks and matrix for the
// suites given, and returns the baseline and each suite's problems.
func judgeBaselineReports(preds *Predictions, suites []verdict.Suite, checks *report.Checks, attacks *report.Attacks, ms int64) (report.Baseline, map[verdict.Suite][]string) {
	b := report.Baseline{Expected: expectedIn(preds, suites), MS: ms, Problems: []string{}, Checks: checks, Attacks: attacks}
	problems := map[verdict.Suite][]string{}
	add := func(s verdict.Suite, format string, args ...any) {
		p := fmt.Sprintf(format, args...)
		b.Problems = append(b.Problems, p)
		problems[s] = append(problems[s], p)
	}
	for _, c := range b.Checks.Checks {
		if !c.Passed && c.Suite.In(suites) {
			add(c.Suite.OrCourse(), "check %s fails on the correct sandbox: %s", c.ID, c.Evidence)
		}
	}
	names := make([]string, 0, len(b.Expected))
	for a := range b.Expected {
		names = append(names, a)
	}
	sort.Strings(names)
	for _, a := range names {
		want := b.Expected[a]
		got, ok := b.Attacks.FirstStopped[a]
		_, na := b.Attacks.NotApplicable[a]
		switch s := preds.AttackSuite(a); {
		case na:
			// Nothing to compare on this host; the matrix says why.
		case !ok:
			add(s, "attack %s was not run", a)
		case got != want:
			add(s, "attack %s is first stopped at %s, expected L%d", a, levelName(got), want)
		}
	}
	b.OK = len(b.Problems) == 0
	return b, problems
}

func levelName(l int) string {
	if l < 0 {
		return "no level"
	}
	return fmt.Sprintf("L%d", l)
}

// facts is what a defect's run showed, all the diff needs.
type facts struct {
	failed     []string // checks that failed
	newEscapes []string // attack cells escaped that the baseline stops
	err        error    // no verdict (with hung: the worker ran out of time)
	hung       bool
	ms         int64
	seen       map[string]report.Seen // each probe's verdict and evidence, as far as known
	na         map[string]bool        // cells not applicable on this host
	untestable string                 // why the host cannot test the defect ("": it can)
}

// judge diffs one defect's run against its prediction and the baseline,
// by the checks and cells of the defect's suite only.
func (r *Runner) judge(d mutants.Defect, w workResult, err error, base *WorkerResult) report.Defect {
	f := facts{err: err, hung: w.hung, ms: w.ms, failed: []string{}, newEscapes: []string{}}
	if err == nil {
		s := d.Suite.OrCourse()
		checks, cells := w.result.Checks.InSuite(s), w.result.Attacks.InSuite(s)
		f.failed = checks.FailedIDs()
		f.seen = map[string]report.Seen{}
		for _, c := range checks.Checks {
			f.seen[c.ID] = report.Seen{Probe: c.ID, Verdict: checkVerdict(c.Passed), Evidence: c.Evidence}
		}
		f.na = naCells(cells)
		for _, c := range cells.Cells {
			if c.NA != "" {
				continue
			}
			f.seen[c.Name()] = report.Seen{Probe: c.Name(), Verdict: cellVerdict(c.Escaped), Evidence: c.Evidence}
		}
		baseEscaped := set(base.Attacks.InSuite(s).Escaped())
		for _, c := range cells.Escaped() {
			if !baseEscaped[c] {
				f.newEscapes = append(f.newEscapes, c)
			}
		}
	}
	return judgeFacts(r.Predictions, d, f)
}

// naCells returns the cells of a that do not apply on this host.
func naCells(a *report.Attacks) map[string]bool {
	out := map[string]bool{}
	for _, c := range a.Cells {
		if c.NA != "" {
			out[c.Name()] = true
		}
	}
	return out
}

// judgeFacts diffs what a defect's run showed against its prediction.
func judgeFacts(preds *Predictions, d mutants.Defect, f facts) report.Defect {
	p := preds.Lookup(string(d.ID))
	out := report.Defect{
		ID: string(d.ID), Suite: d.Suite.OrCourse(), Summary: d.Summary, Site: d.Site, MS: f.ms,
		FailedChecks: []string{}, EscapedAttacks: []string{}, Unexpected: []string{},
		PredictedChecks: p.CheckIDs(), PredictedAttacks: p.Cells(),
	}
	if p.Known != nil {
		out.Known = &report.Known{Outcome: p.Known.Outcome, Attacks: p.Known.Cells(), Why: p.Known.Why}
	}
	if f.untestable != "" {
		out.Outcome, out.Error = verdict.Untestable, f.untestable
		return out
	}
	if f.err != nil {
		out.Outcome, out.Error = verdict.Error, f.err.Error()
		if f.hung {
			out.Outcome = verdict.Hung
		}
		// No verdict is not a catch: for the gate it counts as an escape.
		out.Unexpected = append(out.Unexpected, "no verdict: "+f.err.Error())
		out.UnexpectedEscape = true
		return out
	}
	out.FailedChecks = append(out.FailedChecks, f.failed...)
	out.EscapedAttacks = append(out.EscapedAttacks, f.newEscapes...)
	out.Outcome = verdict.Compare(out.FailedChecks, out.PredictedChecks)
	if want := p.Known.ExpectedOutcome(); out.Outcome != want {
		if out.Outcome != verdict.Exact {
			out.Unexpected = append(out.Unexpected, fmt.Sprintf("%s: predicted %s, failed %s", out.Outcome, orNone(out.PredictedChecks), orNone(out.FailedChecks)))
		}
		if want != verdict.Exact {
			out.Unexpected = append(out.Unexpected, fmt.Sprintf("the known %s divergence did not happen", want))
		}
		if out.Outcome == verdict.Escaped {
			out.UnexpectedEscape = true
		}
	}
	predicted, escaped, known := set(out.PredictedAttacks), set(out.EscapedAttacks), set(p.Known.Cells())
	for _, c := range out.EscapedAttacks {
		switch {
		case predicted[c] && known[c]:
			out.Unexpected = append(out.Unexpected, "attack cell "+c+" escaped as predicted, against its known divergence")
		case !predicted[c] && !known[c]:
			out.Unexpected = append(out.Unexpected, "attack cell "+c+" escaped, not predicted")
			out.UnexpectedEscape = true
		}
	}
	for _, c := range out.PredictedAttacks {
		if f.na[c] {
			out.NotApplicable = append(out.NotApplicable, c)
			continue
		}
		if !escaped[c] && !known[c] {
			out.Unexpected = append(out.Unexpected, "attack cell "+c+" was predicted to escape but was stopped")
		}
	}
	for _, c := range p.Known.Cells() {
		if !predicted[c] && !escaped[c] && !f.na[c] {
			out.Unexpected = append(out.Unexpected, "attack cell "+c+" is known to escape but was stopped")
		}
	}
	out.Seen = seenBehind(out, p.Known.ExpectedOutcome(), p.Known.Cells(), f.seen)
	return out
}

// seenBehind returns what the host saw in the probes the defect's
// unexpected results name: when the checks' outcome is not the one
// expected, every check failed against the prediction or passed against
// it; and every cell that escaped or was stopped against both the
// prediction and the known divergence.
func seenBehind(d report.Defect, want verdict.Outcome, knownCells []string, seen map[string]report.Seen) []report.Seen {
	if len(d.Unexpected) == 0 || len(seen) == 0 {
		return nil
	}
	var ids []string
	if d.Outcome != want {
		failed, predicted := set(d.FailedChecks), set(d.PredictedChecks)
		for _, c := range d.FailedChecks {
			if !predicted[c] {
				ids = append(ids, c)
			}
		}
		for _, c := range d.PredictedChecks {
			if !failed[c] {
				ids = append(ids, c)
			}
		}
	}
	predicted, escaped, known := set(d.PredictedAttacks), set(d.EscapedAttacks), set(knownCells)
	for _, c := range d.EscapedAttacks {
		if predicted[c] == known[c] {
			ids = append(ids, c)
		}
	}
	for _, c := range d.PredictedAttacks {
		if !escaped[c] && !known[c] {
			ids = append(ids, c)
		}
	}
	for _, c := range knownCells {
		if !predicted[c] && !escaped[c] {
			ids = append(ids, c)
		}
	}
	var out []report.Seen
	for _, id := range ids {
		if s, ok := seen[id]; ok {
			out = append(out, s)
		}
	}
	return out
}

func checkVerdict(passed bool) string {
	if passed {
		return verdict.CheckPassed
	}
	return verdict.CheckFailed
}

func cellVerdict(escaped bool) string {
	if escaped {
		return verdict.CellEscaped
	}
	return verdict.CellStopped
}

func orNone(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
