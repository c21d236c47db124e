package report

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"sandboxlab/verdict"
)

// Mutation is the report of 'sandboxlab mutate': the baseline, each
// planted defect's run diffed against its prediction, the summary and the
// gate.
type Mutation struct {
	// Identity says who ran the harness.
	Identity Identity `json:"identity"`
	// Baseline is the run of the correct sandbox.
	Baseline Baseline `json:"baseline"`
	// Defects are the planted defects, in registry order.
	Defects []Defect `json:"defects"`
	// Summary counts the defects of the whole run by outcome (see Tally).
	Summary Summary `json:"summary"`
	// Suites is each suite's share of the run, in report order: one entry
	// per suite that has members (defects, checks or attacks) in the run.
	// Nil only in a report from before suites, which is the course's.
	Suites []SuiteResult `json:"suites,omitempty"`
	// FailOn is the gate's policy: escape, any or never.
	FailOn verdict.FailOn `json:"fail_on"`
	// Gate is pass or fail.
	Gate verdict.Gate `json:"gate"`
	// MS is the wall time of the whole run.
	MS int64 `json:"ms"`
	// Jobs is how many probes ran at once, at most.
	Jobs int `json:"jobs"`
	// Run says how the run was made: selection, repeats, shard, and what
	// from (nil in a report from before probes were selected).
	Run *RunInfo `json:"run,omitempty"`
	// Flaky lists the probes whose verdict changed between repeats (see
	// RunInfo.Repeat), the baseline's and the defects'. Any fails the
	// gate, with its own exit code.
	Flaky []Flake `json:"flaky,omitempty"`
	// Masking lists the layers found hiding a defect from a probe
	// (mutate --masking).
	Masking []Mask `json:"masking,omitempty"`
}

// RunInfo says how a mutation run was made.
type RunInfo struct {
	// Selection is true when each defect ran only the probes that reach
	// its planted site in the baseline (coverage-guided selection).
	Selection bool `json:"selection"`
	// Repeat is how many times each probe ran.
	Repeat int `json:"repeat"`
	// Shard is the slice of the defects this run had ("k/n"; "" for all).
	Shard string `json:"shard,omitempty"`
	// ShardTimes names the earlier run's times the shards were cut by
	// (mutate --shard-times; "": every N-th defect).
	ShardTimes string `json:"shard_times,omitempty"`
	// Suites are the suites of the run.
	Suites []verdict.Suite `json:"suites"`
	// Build identifies the binary (a digest of it); Predictions the
	// predictions file (a digest of it). Shards merge only when both agree.
	Build       string `json:"build"`
	Predictions string `json:"predictions"`
	// BaselineProbeRuns counts the baseline's probe runs; ProbeRuns the
	// defects'; ProbeRunsUnselected what the defects would have run
	// without selection.
	BaselineProbeRuns   int `json:"baseline_probe_runs"`
	ProbeRuns           int `json:"probe_runs"`
	ProbeRunsUnselected int `json:"probe_runs_unselected"`
	// Coverage is the baseline's reached-sites table: every probe, the
	// defects whose planted sites it reaches, and what it cost.
	Coverage []ProbeCoverage `json:"coverage,omitempty"`
	// ID names the run (its start, UTC, and a random suffix), and Started
	// is its start (RFC 3339): a later run that reuses its verdicts says
	// which run they came from.
	ID      string `json:"id,omitempty"`
	Started string `json:"started,omitempty"`
	// Inputs are digests of everything the run's measurements depend on
	// (nil: not recorded, and nothing can be reused from this report).
	Inputs *Inputs `json:"inputs,omitempty"`
	// Reused says what the run took from an earlier run's report instead
	// of running it (mutate --incremental).
	Reused *Reused `json:"reused,omitempty"`
	// Partial is set when the run ran only the defects a diff touches
	// (mutate --since): its summary and gate cover only those.
	Partial *Partial `json:"partial,omitempty"`
	// KillLate is, for each level, how late the kills of its runs
	// stopped at their time limit landed, as the host saw them.
	KillLate []KillLate `json:"kill_late,omitempty"`
	// Starved lists the probes with runs stopped at their time limit
	// starved of CPU: verdicts the machine's load may have made.
	Starved []StarvedProbe `json:"starved,omitempty"`
	// Timing is where each phase's time went, by kind of process, in the
	// order the phases ran (nil in a report from before it was measured).
	Timing []PhaseTiming `json:"timing,omitempty"`
}

// The phases of a mutation run, as PhaseTiming names them.
const (
	PhaseBaseline = "baseline"
	PhaseDefects  = "defects"
	PhaseMasking  = "masking"
)

// PhaseTiming is where one phase of a mutation run spent its time. The
// CPU times split what its workers spent by kind of process; the wall
// times say how much of the probes' time their programs ran. A merged
// report has the first shard's baseline and the sum of every shard's
// other phases.
type PhaseTiming struct {
	Phase string `json:"phase"`
	// ElapsedMS is the phase's wall time, and HarnessCPUMS the CPU time
	// the harness's own process spent in it: scheduling, reading the
	// workers' verdicts, judging.
	ElapsedMS    int64 `json:"elapsed_ms"`
	HarnessCPUMS int64 `json:"harness_cpu_ms"`
	// ProbeRuns counts the workers started, ProbeWallMS sums their wall
	// times, and WorkerTotalCPUMS their CPU times with everything they
	// waited for: what the four kinds below split.
	ProbeRuns        int   `json:"probe_runs"`
	ProbeWallMS      int64 `json:"probe_wall_ms"`
	WorkerTotalCPUMS int64 `json:"worker_total_cpu_ms"`
	// WorkerStartCPUMS is the workers' CPU up to their main: exec, the Go
	// runtime, the package initialisers. WorkerCPUMS is their own CPU
	// after that: fixtures, judges and their samplers, supervising runs.
	WorkerStartCPUMS int64 `json:"worker_start_cpu_ms"`
	WorkerCPUMS      int64 `json:"worker_cpu_ms"`
	// HelperCPUMS is the CPU of the processes the workers waited for
	// that were not the programs: the runs' inits, and the helpers and
	// CLI runs checks start. ProgramCPUMS is the programs' own.
	HelperCPUMS  int64 `json:"helper_cpu_ms"`
	ProgramCPUMS int64 `json:"program_cpu_ms"`
	// ProgramRuns counts the sandbox runs the workers made, ProgramWallMS
	// sums their programs' wall times, and InitSetupMS their inits' exec
	// to program exec.
	ProgramRuns   int   `json:"program_runs"`
	ProgramWallMS int64 `json:"program_wall_ms"`
	InitSetupMS   int64 `json:"init_setup_ms"`
}

// KillLate is one level's runs stopped at their time limit, in the
// probes' worker processes (a run of the CLI a probe starts is not
// counted): for each, how long after its deadline the host saw the
// program end (sandbox.Result.KillLate), in milliseconds.
type KillLate struct {
	Level int `json:"level"`
	// BaselineMS are the baseline's runs, DefectsMS the defects' and the
	// masking search's, each sorted (a merged report has the first
	// shard's baseline and every shard's defects).
	BaselineMS []int64 `json:"baseline_ms"`
	DefectsMS  []int64 `json:"defects_ms"`
	// BaselineInitMS and DefectsInitMS are, of the runs the init stopped
	// (L6), how long after the deadline the init woke
	// (sandbox.Result.InitLate), sorted: the part of the lateness that is
	// the init's own; the rest is the kernel ending the namespace and the
	// host noticing.
	BaselineInitMS []int64 `json:"baseline_init_ms,omitempty"`
	DefectsInitMS  []int64 `json:"defects_init_ms,omitempty"`
	// BaselineBackstop and DefectsBackstop count the runs of each that
	// the supervisor's backstop ended because the init had not (L6).
	BaselineBackstop int `json:"baseline_backstop,omitempty"`
	DefectsBackstop  int `json:"defects_backstop,omitempty"`
	// Latest are the level's latest kills, up to LatestKills of the
	// baseline's and as many of the defects', latest first, each named by
	// its probe: percentiles say how late, these say which programs, so
	// that a late tail can be traced.
	Latest []LateKill `json:"latest,omitempty"`
}

// LatestKills is how many of a level's latest kills KillLate names, of
// the baseline's and of the defects' each.
const LatestKills = 5

// LateKill is one run stopped late at its time limit.
type LateKill struct {
	Probe string `json:"probe"`
	// Defect is the defect switched on ("" for the baseline).
	Defect string `json:"defect,omitempty"`
	LateMS int64  `json:"late_ms"`
	// InitLateMS is how late the init woke, for a run it stopped (L6).
	InitLateMS *int64 `json:"init_late_ms,omitempty"`
	Backstop   bool   `json:"backstop,omitempty"`
	Starved    bool   `json:"starved,omitempty"`
}

// KeepLatest sorts kills latest first (ties by probe and defect, for a
// stable report) and keeps the first LatestKills of the baseline's and of
// the defects'.
func KeepLatest(kills []LateKill) []LateKill {
	slices.SortStableFunc(kills, func(a, b LateKill) int {
		if a.LateMS != b.LateMS {
			return cmp.Compare(b.LateMS, a.LateMS)
		}
		return cmp.Or(cmp.Compare(a.Probe, b.Probe), cmp.Compare(a.Defect, b.Defect))
	})
	var kept []LateKill
	baseline, defects := 0, 0
	for _, k := range kills {
		n := &defects
		if k.Defect == "" {
			n = &baseline
		}
		if *n < LatestKills {
			*n++
			kept = append(kept, k)
		}
	}
	return kept
}

// Percentile is the q-th percentile (0 < q <= 100) of sorted, by the
// nearest rank; 0 when it is empty.
func Percentile(sorted []int64, q float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(q / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// StarvedProbe is a probe with runs stopped at their time limit starved
// of CPU, or a check not about time with runs stopped at its clock.
type StarvedProbe struct {
	Probe string `json:"probe"`
	// Defect is the defect switched on ("" for the baseline).
	Defect string `json:"defect,omitempty"`
	// Runs counts its starved runs; RanTwice is set when the probe failed
	// with them and ran once more, the second verdict standing.
	Runs int `json:"runs"`
	// ClockStops counts, for a check whose promise is not about time,
	// its runs stopped at their clock, starved or not.
	ClockStops int `json:"clock_stops,omitempty"`
	// TimedEscape is set for an attack cell that escaped by its judge's
	// margin of time where the correct sandbox stops it: the stop may
	// have come late for the machine's load (attacks.EscapeMayBeLoad).
	TimedEscape bool `json:"timed_escape,omitempty"`
	RanTwice    bool `json:"ran_twice,omitempty"`
}

// Inputs are digests of what a run's measurements depend on: a probe's
// verdict, on the correct sandbox or with a defect on, is what its worker
// saw, and that depends on the shared inputs, its own files and the
// environment. Judging (the predictions, the runner, the renderers) is
// done again by every run, so it is no input.
type Inputs struct {
	// Shared maps each group of sources every probe (or every check, or
	// every attack) runs to its digest: "library" (the sandbox library),
	// "machinery" (the gate, the worker and the model the facts are kept
	// in), "checks" and "attacks" (the files a package's probes share).
	Shared map[string]string `json:"shared"`
	// Probes maps each check's and each attack's id to the digest of what
	// it runs beyond the library: its own files (an attack's program
	// among them) and its package's shared files.
	Probes map[string]string `json:"probes"`
	// Environment is the host's and the build's fingerprint, field by
	// field: kernel release, Landlock ABI, cgroup layout, uid, the
	// interpreter's version, the toolchain and the modules linked.
	Environment map[string]string `json:"environment"`
}

// Reused says what a run took from an earlier run's report.
type Reused struct {
	// From is the earlier run's id, and FromStarted its start.
	From        string `json:"from"`
	FromStarted string `json:"from_started,omitempty"`
	// Changed says what changed since that run, as the inputs tell it: a
	// shared group, an environment field, or a probe's files. When a
	// shared group or the environment changed, nothing was reused.
	Changed []string `json:"changed"`
	// BaselineProbeRuns counts the baseline's probe runs taken from the
	// earlier run, ProbeRuns the defects'.
	BaselineProbeRuns int `json:"baseline_probe_runs"`
	ProbeRuns         int `json:"probe_runs"`
	// Defects counts the defects that ran no probe at all, every verdict
	// of theirs reused; Rejudged lists those whose prediction changed
	// since, judged again on the reused facts (as mutate --replay does).
	Defects  int      `json:"defects"`
	Rejudged []string `json:"rejudged,omitempty"`
}

// Partial says what a diff-scoped run (mutate --since) ran.
type Partial struct {
	// Since is the revision the diff was taken from.
	Since string `json:"since"`
	// Sites are the defects whose planted site's function the diff
	// changed; Probes the checks and attacks whose files it changed.
	Sites  []string `json:"sites"`
	Probes []string `json:"probes"`
	// Of counts the defects the run would have had without --since.
	Of int `json:"of"`
}

// ProbeCoverage is one probe's row of the reached-sites table.
type ProbeCoverage struct {
	// Probe is the check's id or the cell's name.
	Probe string `json:"probe"`
	// Reached are the defects whose planted sites its run asks, in any
	// process it involves.
	Reached []string `json:"reached"`
	// WallMS and CPUMS are its baseline run's wall time and the CPU time
	// of its worker and everything the worker waited for (the mean of the
	// repeats).
	WallMS int64 `json:"wall_ms"`
	CPUMS  int64 `json:"cpu_ms"`
}

// Flake is a probe whose verdict changed between the repeats of one run.
type Flake struct {
	// Defect is the defect switched on ("" for the baseline).
	Defect string `json:"defect,omitempty"`
	// Probe is the check's id or the cell's name.
	Probe string `json:"probe"`
	// Verdicts are the repeats' verdicts, in order (pass/fail for a
	// check, escaped/stopped for a cell), and Evidence what the host saw
	// in each: why it flaked.
	Verdicts []string `json:"verdicts"`
	Evidence []string `json:"evidence,omitempty"`
}

// Mask is a layer found hiding a defect from a probe: with the layer
// taken away, the probe catches the defect, and it still passes on the
// correct sandbox.
type Mask struct {
	Defect string `json:"defect"`
	// Probe is the probe that missed the defect; Plain is true when the
	// probe was run with its own layer removals undone.
	Probe string `json:"probe"`
	Plain bool   `json:"plain,omitempty"`
	// Layer is the layer whose removal reveals the defect.
	Layer string `json:"layer"`
}

// Baseline is the correct sandbox's run, which every defect is compared
// with.
type Baseline struct {
	// OK is false when a check failed or the attack matrix differs from
	// the expected one: then no defect is run.
	OK bool `json:"ok"`
	// Problems says what is wrong with a broken baseline.
	Problems []string `json:"problems"`
	// Checks and Attacks are the correct sandbox's results.
	Checks  *Checks  `json:"checks"`
	Attacks *Attacks `json:"attacks"`
	// Expected is the first stopping level of each attack, from the
	// predictions file.
	Expected map[string]int `json:"expected"`
	// MS is how long the baseline run took.
	MS int64 `json:"ms"`
}

// Defect is one planted defect's run, diffed against its prediction.
type Defect struct {
	// ID is the defect's stable id.
	ID string `json:"id"`
	// Suite is the suite the defect belongs to, whose checks and attacks
	// judged it ("" only in a report from before suites: the course).
	Suite verdict.Suite `json:"suite,omitempty"`
	// Summary says in one line what the defective sandbox does wrong.
	Summary string `json:"summary"`
	// Site is the file holding the planted site.
	Site string `json:"site"`
	// FailedChecks are the checks that failed with the defect on.
	FailedChecks []string `json:"failed_checks"`
	// PredictedChecks are those predicted to fail.
	PredictedChecks []string `json:"predicted_checks"`
	// Outcome compares the two: exact, too_wide, extra, different,
	// escaped (no check failed), hung or error; untestable when the host
	// lacks what the defect needs (it was not run; Error says why).
	Outcome verdict.Outcome `json:"outcome"`
	// EscapedAttacks are the attack cells that escaped with the defect on
	// and are stopped on the correct sandbox (attack@L<n>).
	EscapedAttacks []string `json:"escaped_attacks"`
	// PredictedAttacks are those predicted to.
	PredictedAttacks []string `json:"predicted_attacks"`
	// Known is the divergence the predictions file already records.
	Known *Known `json:"known"`
	// Unexpected lists what neither the prediction nor Known explains.
	Unexpected []string `json:"unexpected"`
	// UnexpectedEscape is true when the unexplained part lets something
	// through: no check caught the defect, an attack cell escaped, or the
	// run gave no verdict (hung or failed).
	UnexpectedEscape bool `json:"unexpected_escape"`
	// Error says why a hung or failed run gave no verdict, or why an
	// untestable defect could not be tested on this host.
	Error string `json:"error,omitempty"`
	// NotApplicable are the cells of PredictedAttacks that do not apply
	// on this host (report.Cell.NA): left out of the comparison.
	NotApplicable []string `json:"not_applicable,omitempty"`
	// MS is how long the defect's probes ran, summed.
	MS int64 `json:"ms"`
	// Reached are the probes that reach the defect's planted site on the
	// correct sandbox (the baseline's coverage); with selection, the only
	// ones it ran.
	Reached []string `json:"reached,omitempty"`
	// NotReached is true when no probe reaches the defect's site: it ran
	// nothing, and no check could catch it (Stryker's NoCoverage).
	NotReached bool `json:"not_reached,omitempty"`
	// Probes counts the probe runs the defect had (repeats included).
	Probes int `json:"probes,omitempty"`
	// Flaky lists its probes whose verdict changed between repeats.
	Flaky []Flake `json:"flaky,omitempty"`
	// Seen is what the host saw in each probe an unexpected result names
	// (a check that failed or passed against the prediction, a cell that
	// escaped or was stopped against it): why CI failed, without a rerun.
	Seen []Seen `json:"seen,omitempty"`
	// Reuse says which of its probes' verdicts came from an earlier run
	// (mutate --incremental); nil when every one was measured in this run.
	Reuse *DefectReuse `json:"reuse,omitempty"`
}

// DefectReuse is what of one defect's run came from an earlier run.
type DefectReuse struct {
	// From is the id of the run whose report was read.
	From string `json:"from"`
	// Probes are the probes whose verdicts with the defect on were
	// reused; the defect's other probes ran.
	Probes []string `json:"probes"`
	// Rejudged is true when its prediction changed since that run: the
	// reused facts were judged against the new one.
	Rejudged bool `json:"rejudged,omitempty"`
}

// Seen is one probe's verdict and evidence under a defect.
type Seen struct {
	// Probe is the check's id or the cell's name (attack@L<n>).
	Probe string `json:"probe"`
	// Verdict is pass or fail for a check, escaped or stopped for a cell.
	Verdict string `json:"verdict"`
	// Evidence is what the host saw: on a check's failure, its first
	// failure message.
	Evidence string `json:"evidence"`
}

// Known is a divergence the predictions file records as understood.
type Known struct {
	// Outcome is the checks' outcome expected instead of the prediction
	// ("" when the checks go as predicted).
	Outcome verdict.Outcome `json:"outcome"`
	// Attacks are the attack cells known to go against the prediction.
	Attacks []string `json:"attacks,omitempty"`
	// Why explains it.
	Why string `json:"why"`
}

// String says what is known and why, in one line.
func (k *Known) String() string {
	var what []string
	if k.Outcome != "" {
		what = append(what, string(k.Outcome))
	}
	if len(k.Attacks) > 0 {
		what = append(what, "attack cells "+cells(k.Attacks))
	}
	return "known " + strings.Join(what, ", ") + ": " + k.Why
}

// Caught reports whether some check failed with the defect on.
func (d *Defect) Caught() bool {
	return d.Outcome.Caught()
}

// Summary counts the defects by outcome.
type Summary struct {
	// Defects counts the defects run (untestable ones are not).
	Defects int `json:"defects"`
	// Caught counts those some check failed for.
	Caught int `json:"caught"`
	// The rest count the defects by outcome.
	Escaped   int `json:"escaped"`
	Exact     int `json:"exact"`
	TooWide   int `json:"too_wide"`
	Extra     int `json:"extra"`
	Different int `json:"different"`
	// Hung counts runs that hung or failed without a verdict.
	Hung int `json:"hung"`
	// Unexpected counts defects with something unexplained.
	Unexpected int `json:"unexpected"`
	// UnexpectedEscapes counts defects with an unexplained escape.
	UnexpectedEscapes int `json:"unexpected_escapes"`
	// Untestable counts the defects this host cannot test (not run).
	Untestable int `json:"untestable,omitempty"`
}

// SuiteResult is one suite's share of a mutation run: its baseline, the
// count of its defects and its gate.
type SuiteResult struct {
	// Suite names the suite.
	Suite verdict.Suite `json:"suite"`
	// BaselineOK is false when a check of the suite failed, or one of its
	// attacks was not first stopped where predicted, on the correct
	// sandbox: then none of its defects was run.
	BaselineOK bool `json:"baseline_ok"`
	// Problems says what is wrong with the suite's baseline.
	Problems []string `json:"problems"`
	// Summary counts the suite's defects by outcome (see Tally).
	Summary Summary `json:"summary"`
	// Gate is pass or fail, for this suite's defects and baseline alone;
	// the run's gate fails when any suite's does.
	Gate verdict.Gate `json:"gate"`
}

// SuiteResult returns the share of suite s in the run, if it has one.
func (m *Mutation) SuiteResult(s verdict.Suite) (SuiteResult, bool) {
	for _, r := range m.Suites {
		if r.Suite == s {
			return r, true
		}
	}
	return SuiteResult{}, false
}

// Tally fills the summary of the whole run, and that of each entry of
// Suites, from the defects.
func (m *Mutation) Tally() {
	m.Summary = tally(m.Defects)
	for i := range m.Suites {
		m.Suites[i].Summary = tally(defectsIn(m.Defects, m.Suites[i].Suite))
	}
}

// SuiteResults returns each suite's share of the run in report order,
// as every renderer shows it: the entries of Suites, and where Suites
// has none for a suite (a report from before suites) one made from the
// run's own baseline, summary and gate.
func (m *Mutation) SuiteResults() []SuiteResult {
	parts := m.parts()
	out := make([]SuiteResult, len(parts))
	for i, pt := range parts {
		out[i] = pt.res
	}
	return out
}

// Probes lists the checks and attack cells the baseline ran for suite
// s: what a defect of s was run against.
func (m *Mutation) Probes(s verdict.Suite) []string {
	var out []string
	if c := m.Baseline.Checks; c != nil {
		for _, ch := range c.InSuite(s).Checks {
			out = append(out, ch.ID)
		}
	}
	if a := m.Baseline.Attacks; a != nil {
		for _, c := range a.InSuite(s).Cells {
			out = append(out, c.Name())
		}
	}
	return out
}

// FlakesIn returns the flaky probes of suite s: those of its defects, and
// the baseline's of its checks and attacks.
func (m *Mutation) FlakesIn(s verdict.Suite) []Flake {
	suiteOf := map[string]verdict.Suite{}
	for _, d := range m.Defects {
		suiteOf[d.ID] = d.Suite.OrCourse()
	}
	var out []Flake
	for _, f := range m.Flaky {
		switch {
		case f.Defect != "":
			if suiteOf[f.Defect] == s.OrCourse() {
				out = append(out, f)
			}
		case m.probeSuite(f.Probe) == s.OrCourse():
			out = append(out, f)
		}
	}
	return out
}

// probeSuite is the suite of a probe of the baseline: a check's, or a
// cell's attack's.
func (m *Mutation) probeSuite(probe string) verdict.Suite {
	if c, err := verdict.ParseCell(probe); err == nil {
		if m.Baseline.Attacks != nil {
			return m.Baseline.Attacks.SuiteOf(c.Attack)
		}
		return verdict.Course
	}
	if m.Baseline.Checks != nil {
		for _, c := range m.Baseline.Checks.Checks {
			if c.ID == probe {
				return c.Suite.OrCourse()
			}
		}
	}
	return verdict.Course
}

// tally counts defects by outcome.
func tally(defects []Defect) Summary {
	s := Summary{}
	for _, d := range defects {
		if d.Outcome == verdict.Untestable {
			s.Untestable++
			continue
		}
		s.Defects++
		if d.Caught() {
			s.Caught++
		}
		switch d.Outcome {
		case verdict.Escaped:
			s.Escaped++
		case verdict.Exact:
			s.Exact++
		case verdict.TooWide:
			s.TooWide++
		case verdict.Extra:
			s.Extra++
		case verdict.Different:
			s.Different++
		case verdict.Hung, verdict.Error:
			s.Hung++
		}
		if len(d.Unexpected) > 0 {
			s.Unexpected++
		}
		if d.UnexpectedEscape {
			s.UnexpectedEscapes++
		}
	}
	return s
}

// properties are what the JUnit report says of how the run was made: the
// revision a partial run's diff was taken from, and the run whose verdicts
// it reused.
func (r *RunInfo) properties() []Property {
	var out []Property
	if r == nil {
		return out
	}
	if r.Partial != nil {
		out = append(out, Property{"partial_since", r.Partial.Since})
	}
	if r.Reused != nil {
		out = append(out, Property{"reused_from", r.Reused.From})
	}
	if r.ID != "" {
		out = append(out, Property{"run_id", r.ID})
	}
	return out
}
