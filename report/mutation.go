package report

import (
	"fmt"
	"io"
	"sort"
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

// summaryHeader heads the summary table; CrossCheck finds the table by it.
var summaryHeader = []string{"defects", "caught", "escaped", "exact", "too wide", "extra", "different", "hung", "unexpected", "gate"}

// Tables renders the mutation report for people: the summary with the
// notes' headline figures, the per-defect table (predicted against failed,
// the outcome and why), and the baseline with its attack matrix; one such
// part per suite, the course's first (as a run of the course alone shows
// it), the gate's sentence, which covers every suite, in the first.
func (m *Mutation) Tables(w io.Writer, md bool) error {
	p := newPrinter(w, md)
	parts := m.parts()
	for i := range parts {
		if i > 0 {
			p.printf("\n")
		}
		m.tablesPart(p, parts, i)
	}
	return p.err
}

// tablesPart renders parts[i]. The course's headings are those of a
// report from before suites; another suite's name it.
func (m *Mutation) tablesPart(p *printer, parts []mutationPart, i int) {
	pt, first, multi := parts[i], i == 0, len(parts) > 1
	s, course := pt.res.Summary, isCourse(pt.res.Suite)
	headings := [3]string{"Mutation run", "Defects", "Baseline"}
	if !course {
		word := suiteWord(pt.res.Suite)
		headings = [3]string{word + " suite", word + " defects", word + " baseline"}
	}
	p.heading(headings[0])
	if !pt.res.BaselineOK {
		if multi {
			p.printf("The %s suite's baseline is broken, so none of its defects was run:\n%s", pt.res.Suite, para(p.md))
		} else {
			p.printf("The baseline is broken, so no defect was run:\n%s", para(p.md))
		}
		for _, prob := range pt.res.Problems {
			p.printf("- %s\n", prob)
		}
		p.printf("\n")
	}
	p.table(summaryHeader,
		[][]string{{itoa(s.Defects), itoa(s.Caught), itoa(s.Escaped), itoa(s.Exact), itoa(s.TooWide), itoa(s.Extra), itoa(s.Different), itoa(s.Hung), itoa(s.Unexpected), string(pt.res.Gate)}})
	if len(pt.defects) > 0 {
		p.printf("- %d of %d defects caught; %d failed exactly the checks predicted.\n", s.Caught, s.Defects, s.Exact)
		for _, o := range []struct {
			outcome verdict.Outcome
			words   string
		}{
			{verdict.Escaped, "escaped (no check failed)"},
			{verdict.TooWide, "prediction too wide"},
			{verdict.Extra, "an extra failure"},
			{verdict.Different, "different checks failed"},
			{verdict.Hung, "hung (no verdict)"},
			{verdict.Error, "failed to run (no verdict)"},
		} {
			var ids []string
			for _, d := range pt.defects {
				if d.Outcome == o.outcome {
					ids = append(ids, d.ID+" ("+yesNo(len(d.Unexpected) > 0, "UNEXPECTED", "known")+")")
				}
			}
			if len(ids) > 0 {
				p.printf("- %s: %s\n", o.words, strings.Join(ids, ", "))
			}
		}
		var unreached []string
		for _, d := range pt.defects {
			if d.NotReached {
				unreached = append(unreached, d.ID)
			}
		}
		if len(unreached) > 0 {
			p.printf("- not reached by any probe (nothing ran with it on): %s\n", strings.Join(unreached, ", "))
		}
		for _, d := range pt.defects {
			if d.Outcome == verdict.Untestable {
				p.printf("- not testable on this host, not run: %s (%s)\n", d.ID, d.Error)
			}
		}
		var opened []string
		for _, d := range pt.defects {
			if len(d.EscapedAttacks) > 0 {
				opened = append(opened, d.ID)
			}
		}
		p.printf("- %d of %d defects let attack cells through that the correct sandbox stops.\n", len(opened), s.Defects)
		p.printf("\n")
	}
	if first {
		// Since probes are run one by one, Jobs counts probes.
		unit := yesNo(m.Jobs == 1, "defect", "defects")
		if m.Run != nil {
			unit = yesNo(m.Jobs == 1, "probe", "probes")
		}
		p.printf("%s (--fail-on %s; %d %s at a time; %.0f s; %s).\n",
			gateSentence(m, parts), m.FailOn, m.Jobs, unit, float64(m.MS)/1000, m.Identity.who())
		m.runLines(p)
	}
	if len(pt.defects) > 0 {
		if first {
			p.printf("\n")
		}
		p.heading(headings[1])
		rows := make([][]string, 0, len(pt.defects))
		for _, d := range pt.defects {
			rows = append(rows, []string{d.ID, list(d.PredictedChecks), list(d.FailedChecks), string(d.Outcome),
				cells(d.PredictedAttacks), cells(d.EscapedAttacks), note(d)})
		}
		p.table([]string{"defect", "predicted to fail", "failed", "outcome", "predicted attack escapes", "attack escapes", "why"}, rows)
		p.printf("Attack escapes are the cells that escaped with the defect on and are stopped on the correct sandbox.\n")
		seenLines(p, pt.defects)
		p.printf("\n")
	} else if first {
		p.printf("\n")
	}
	p.heading(headings[2])
	if c := pt.checks; c != nil {
		p.printf("Checks on the correct sandbox: %d passed, %d failed (%.0f s for the checks and the matrix).\n", c.Passed, c.Failed, float64(pt.ms)/1000)
	}
	if a := pt.attacks; a != nil {
		p.printf("\n")
		p.subheading("Attack matrix on the correct sandbox")
		a.matrix(p)
	}
}

// seenLines lists what the host saw in the probes behind each
// unexpected result.
func seenLines(p *printer, defects []Defect) {
	var lines []string
	for _, d := range defects {
		for _, s := range d.Seen {
			lines = append(lines, fmt.Sprintf("- %s, %s %s: %s\n", d.ID, s.Probe, seenVerb(s.Verdict), s.Evidence))
		}
	}
	if len(lines) == 0 {
		return
	}
	p.printf("\nWhat the host saw in the probes behind the unexpected results:\n%s", para(p.md))
	for _, l := range lines {
		p.printf("%s", l)
	}
}

// seenVerb says a probe's verdict as a verb: "cpu_limit failed".
func seenVerb(v string) string {
	switch v {
	case verdict.CheckPassed:
		return "passed"
	case verdict.CheckFailed:
		return "failed"
	}
	return v
}

// runLines says how the run was made (selection, repeats, shard) and
// lists its flaky probes and the masking it found.
func (m *Mutation) runLines(p *printer) {
	r := m.Run
	if r == nil {
		return
	}
	if r.Selection {
		p.printf("Selection: the defects ran %d of the %d probe runs they would have without it (each only the probes that reach its planted site in the baseline, which ran %d).\n",
			r.ProbeRuns, r.ProbeRunsUnselected, r.BaselineProbeRuns)
	} else {
		p.printf("No selection (--no-select): the defects ran all %d of their probe runs; the baseline ran %d.\n", r.ProbeRuns, r.BaselineProbeRuns)
	}
	if r.Repeat > 1 {
		p.printf("Every probe ran %d times; %d changed its verdict between repeats.\n", r.Repeat, len(m.Flaky))
	}
	if r.Shard != "" {
		p.printf("This is shard %s of the defects ('sandboxlab mutate merge' combines the shards).\n", r.Shard)
	}
	if len(m.Flaky) > 0 {
		p.printf("\n")
		p.subheading("Flaky probes")
		rows := make([][]string, 0, len(m.Flaky))
		for _, f := range m.Flaky {
			rows = append(rows, []string{f.Probe, yesNo(f.Defect == "", "(baseline)", f.Defect), strings.Join(f.Verdicts, ", ")})
		}
		p.table([]string{"probe", "defect", "verdicts"}, rows)
	}
	if len(m.Masking) > 0 {
		p.printf("\n")
		p.subheading("Masking")
		rows := make([][]string, 0, len(m.Masking))
		for _, k := range m.Masking {
			probe := k.Probe
			if k.Plain {
				probe += " (its own removals undone)"
			}
			rows = append(rows, []string{k.Defect, probe, k.Layer})
		}
		p.table([]string{"defect", "missed by", "masked by the layer"}, rows)
		p.printf("With the layer taken away the probe catches the defect, and it still passes on the correct sandbox.\n")
	}
}

// gateSentence says whether the gate holds, for every suite of the run,
// and why not.
func gateSentence(m *Mutation, parts []mutationPart) string {
	var ids []string
	for _, d := range m.Defects {
		if len(d.Unexpected) > 0 {
			ids = append(ids, d.ID)
		}
	}
	if !m.Baseline.OK {
		broken := brokenSuites(parts)
		if len(parts) == 1 || len(broken) == 0 {
			return "The gate fails: the baseline is broken"
		}
		s := "The gate fails: the baseline of the " + joinAnd(broken) + " suite is broken"
		if len(broken) > 1 {
			s = "The gate fails: the baselines of the " + joinAnd(broken) + " suites are broken"
		}
		if len(ids) > 0 {
			s += "; unexpected results for " + strings.Join(ids, ", ")
		}
		return s
	}
	switch {
	case m.Gate != verdict.Pass:
		var why []string
		if len(ids) > 0 {
			why = append(why, "unexpected results for "+strings.Join(ids, ", "))
		}
		if n := len(m.Flaky); n > 0 {
			why = append(why, fmt.Sprintf("%d flaky %s", n, yesNo(n == 1, "probe", "probes")))
		}
		return "The gate fails: " + strings.Join(why, "; ")
	case len(ids) == 0:
		return "The gate holds: every result is predicted or known"
	case m.Summary.UnexpectedEscapes > 0:
		return "The gate holds only because it is off: unexpected results for " + strings.Join(ids, ", ")
	}
	return "The gate holds: no unexpected escape, but unexpected results for " + strings.Join(ids, ", ")
}

// note says why a defect's result is what it is: the unexpected first,
// then the known reason.
func note(d Defect) string {
	var parts []string
	if len(d.Unexpected) > 0 {
		parts = append(parts, "UNEXPECTED: "+strings.Join(d.Unexpected, "; "))
	}
	if d.Known != nil {
		parts = append(parts, d.Known.String())
	}
	if d.Error != "" && len(d.Unexpected) == 0 {
		parts = append(parts, d.Error)
	}
	if len(d.NotApplicable) > 0 {
		parts = append(parts, "n/a on this host: "+cells(d.NotApplicable))
	}
	return strings.Join(parts, "; ")
}

// noteSeen is note with what the host saw behind the unexpected
// results, for a page that has no room for a list of its own.
func noteSeen(d Defect) string {
	parts := []string{note(d)}
	for _, s := range d.Seen {
		parts = append(parts, fmt.Sprintf("seen: %s %s: %s", s.Probe, seenVerb(s.Verdict), s.Evidence))
	}
	return strings.Join(parts, "; ")
}

func list(ids []string) string {
	if len(ids) == 0 {
		return "-"
	}
	return strings.Join(ids, ", ")
}

// cells shortens attack cells: attack@L1, attack@L2 → attack@L1-2.
// Cells whose column is not a level are kept as they are, after the rest.
func cells(cs []string) string {
	if len(cs) == 0 {
		return "-"
	}
	levels := map[string][]int{}
	var order, others []string
	for _, c := range cs {
		cell, err := verdict.ParseCell(c)
		lvl, isLevel := cell.Level()
		if err != nil || !isLevel {
			others = append(others, c)
			continue
		}
		at := cell.Attack
		if _, seen := levels[at]; !seen {
			order = append(order, at)
		}
		levels[at] = append(levels[at], lvl)
	}
	var out []string
	for _, at := range order {
		ls := levels[at]
		sort.Ints(ls)
		contiguous := ls[len(ls)-1]-ls[0] == len(ls)-1
		switch {
		case len(ls) == 1:
			out = append(out, fmt.Sprintf("%s@L%d", at, ls[0]))
		case contiguous:
			out = append(out, fmt.Sprintf("%s@L%d-%d", at, ls[0], ls[len(ls)-1]))
		default:
			var s []string
			for _, l := range ls {
				s = append(s, fmt.Sprint(l))
			}
			out = append(out, fmt.Sprintf("%s@L%s", at, strings.Join(s, ",")))
		}
	}
	return strings.Join(append(out, others...), ", ")
}

func itoa(n int) string { return fmt.Sprint(n) }
