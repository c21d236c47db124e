package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"sandboxlab/verdict"
)

// The mutation report for people: text tables for a terminal and the same
// tables in markdown. The model is in mutation.go; the words this file
// gives a defect (note, cells, list) are the per-defect table's, which
// the JUnit, Stryker, GitHub and HTML renderers reuse so that every format
// says the same thing the same way.

// summaryHeader heads the summary table; readers find the table by it
// (reporttest.CrossCheck holds a copy: a renamed column breaks them).
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

// tablesPart renders parts[i]: the summary, the gate's sentence and how
// the run was made (in the first part only: they cover every suite), the
// per-defect table and the baseline. The course's headings are those of a
// report from before suites; another suite's name it.
func (m *Mutation) tablesPart(p *printer, parts []mutationPart, i int) {
	pt, first := parts[i], i == 0
	headings := [3]string{"Mutation run", "Defects", "Baseline"}
	if !isCourse(pt.res.Suite) {
		word := suiteWord(pt.res.Suite)
		headings = [3]string{word + " suite", word + " defects", word + " baseline"}
	}
	p.heading(headings[0])
	brokenBaselineLines(p, pt.res, len(parts) > 1)
	summaryTable(p, pt.res)
	if len(pt.defects) > 0 {
		outcomeLines(p, pt.defects, pt.res.Summary)
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
		defectTable(p, pt.defects)
	} else if first {
		p.printf("\n")
	}
	p.heading(headings[2])
	baselineLines(p, pt)
}

// brokenBaselineLines says that a part's baseline is broken, and why:
// naming the suite when the run has several.
func brokenBaselineLines(p *printer, res SuiteResult, multi bool) {
	if res.BaselineOK {
		return
	}
	if multi {
		p.printf("The %s suite's baseline is broken, so none of its defects was run:\n%s", res.Suite, para(p.md))
	} else {
		p.printf("The baseline is broken, so no defect was run:\n%s", para(p.md))
	}
	for _, prob := range res.Problems {
		p.printf("- %s\n", prob)
	}
	p.printf("\n")
}

// summaryTable is a part's one-row table of its defects' counts and gate.
func summaryTable(p *printer, res SuiteResult) {
	s := res.Summary
	p.table(summaryHeader,
		[][]string{{itoa(s.Defects), itoa(s.Caught), itoa(s.Escaped), itoa(s.Exact), itoa(s.TooWide), itoa(s.Extra), itoa(s.Different), itoa(s.Hung), itoa(s.Unexpected), string(res.Gate)}})
}

// outcomeWords name the outcomes the summary lists defects under, in
// the order it lists them.
var outcomeWords = []struct {
	outcome verdict.Outcome
	words   string
}{
	{verdict.Escaped, "escaped (no check failed)"},
	{verdict.TooWide, "prediction too wide"},
	{verdict.Extra, "an extra failure"},
	{verdict.Different, "different checks failed"},
	{verdict.Hung, "hung (no verdict)"},
	{verdict.Error, "failed to run (no verdict)"},
}

// outcomeLines are the summary's headline figures: how many defects were
// caught, which went against their prediction and whether that was
// known, which no probe reached or this host cannot test, and how many
// opened attack cells.
func outcomeLines(p *printer, defects []Defect, s Summary) {
	p.printf("- %d of %d defects caught; %d failed exactly the checks predicted.\n", s.Caught, s.Defects, s.Exact)
	for _, o := range outcomeWords {
		var ids []string
		for _, d := range defects {
			if d.Outcome == o.outcome {
				ids = append(ids, d.ID+" ("+yesNo(len(d.Unexpected) > 0, "UNEXPECTED", "known")+")")
			}
		}
		if len(ids) > 0 {
			p.printf("- %s: %s\n", o.words, strings.Join(ids, ", "))
		}
	}
	var unreached, opened []string
	for _, d := range defects {
		if d.NotReached {
			unreached = append(unreached, d.ID)
		}
		if len(d.EscapedAttacks) > 0 {
			opened = append(opened, d.ID)
		}
	}
	if len(unreached) > 0 {
		p.printf("- not reached by any probe (nothing ran with it on): %s\n", strings.Join(unreached, ", "))
	}
	for _, d := range defects {
		if d.Outcome == verdict.Untestable {
			p.printf("- not testable on this host, not run: %s (%s)\n", d.ID, d.Error)
		}
	}
	p.printf("- %d of %d defects let attack cells through that the correct sandbox stops.\n", len(opened), s.Defects)
	p.printf("\n")
}

// defectTable is the per-defect table: predicted against failed, the
// outcome and why, and what the host saw behind the unexpected results.
func defectTable(p *printer, defects []Defect) {
	rows := make([][]string, 0, len(defects))
	for _, d := range defects {
		rows = append(rows, []string{d.ID, list(d.PredictedChecks), list(d.FailedChecks), string(d.Outcome),
			cells(d.PredictedAttacks), cells(d.EscapedAttacks), note(d)})
	}
	p.table([]string{"defect", "predicted to fail", "failed", "outcome", "predicted attack escapes", "attack escapes", "why"}, rows)
	p.printf("Attack escapes are the cells that escaped with the defect on and are stopped on the correct sandbox.\n")
	seenLines(p, defects)
	p.printf("\n")
}

// baselineLines are a part's baseline: its checks' count and its attack
// matrix on the correct sandbox.
func baselineLines(p *printer, pt mutationPart) {
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
	partialLines(p, r.Partial, len(m.Defects))
	reusedLines(p, r.Reused, r, m.Defects)
	if len(m.Flaky) > 0 {
		p.printf("\n")
		p.subheading("Flaky probes")
		rows := make([][]string, 0, len(m.Flaky))
		for _, f := range m.Flaky {
			rows = append(rows, []string{f.Probe, yesNo(f.Defect == "", "(baseline)", f.Defect), strings.Join(f.Verdicts, ", ")})
		}
		p.table([]string{"probe", "defect", "verdicts"}, rows)
	}
	timeoutLines(p, r, m.Jobs)
	timingLines(p, r)
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

// partialLines say what a diff-scoped run ran, and that its summary and
// gate cover only that.
func partialLines(p *printer, pt *Partial, ran int) {
	if pt == nil {
		return
	}
	p.printf("PARTIAL RUN (--since %s): %d of %d defects ran: those whose planted site's declaration the diff changed (%s) and those a probe whose files changed reaches (changed probes: %s). The summary and the gate cover only these.\n",
		pt.Since, ran, pt.Of, list(pt.Sites), list(pt.Probes))
}

// reusedLines say what the run took from an earlier run, from which run,
// and what changed since.
func reusedLines(p *printer, ru *Reused, r *RunInfo, defects []Defect) {
	if ru == nil {
		return
	}
	from := "run " + ru.From
	if ru.FromStarted != "" {
		from += " (started " + ru.FromStarted + ")"
	}
	changed := "nothing it depends on"
	if len(ru.Changed) > 0 {
		changed = strings.Join(ru.Changed, "; ")
	}
	if ru.BaselineProbeRuns == 0 && ru.ProbeRuns == 0 {
		p.printf("Nothing reused from %s; changed since: %s.\n", from, changed)
		return
	}
	var again []string
	for _, d := range defects {
		if d.Probes > 0 {
			again = append(again, d.ID)
		}
	}
	line := fmt.Sprintf("Reused from %s: %d of the baseline's %d probe runs and %d of the defects' %d; %d defects ran no probe, every verdict of theirs reused",
		from, ru.BaselineProbeRuns, ru.BaselineProbeRuns+r.BaselineProbeRuns, ru.ProbeRuns, ru.ProbeRuns+r.ProbeRuns, ru.Defects)
	if len(ru.Rejudged) > 0 {
		line += fmt.Sprintf(" (judged again against their edited predictions: %s)", strings.Join(ru.Rejudged, ", "))
	}
	ranAgain := "none"
	if len(again) > 0 {
		ranAgain = strings.Join(again, ", ")
	}
	p.printf("%s. Ran again: %s. Changed since: %s.\n", line, ranAgain, changed)
}

// GateSentence says whether the gate holds, for every suite of the run,
// and why not: the lead sentence of every rendering.
func (m *Mutation) GateSentence() string {
	return gateSentence(m, m.parts())
}

// gateSentence says whether the gate holds, for every suite of the run,
// and why not.
func gateSentence(m *Mutation, parts []mutationPart) string {
	s := wholeGateSentence(m, parts)
	if m.Run == nil || m.Run.Partial == nil {
		return s
	}
	only := fmt.Sprintf(" for this partial run only (--since %s: %d of %d defects ran)", m.Run.Partial.Since, len(m.Defects), m.Run.Partial.Of)
	for _, lead := range []string{"The gate holds", "The gate fails"} {
		if rest, ok := strings.CutPrefix(s, lead); ok {
			return lead + only + rest
		}
	}
	return s
}

// wholeGateSentence is gateSentence as the run's defects give it.
func wholeGateSentence(m *Mutation, parts []mutationPart) string {
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

// latestKills names a level's latest kills: probe, defect, how late, and
// what the host knows of why.
func latestKills(kills []LateKill) string {
	var out []string
	for _, k := range kills {
		s := k.Probe
		if k.Defect != "" {
			s += " under " + k.Defect
		}
		s += " " + ms(k.LateMS)
		var notes []string
		if k.InitLateMS != nil {
			notes = append(notes, "init woke "+ms(*k.InitLateMS)+" late")
		}
		if k.Backstop {
			notes = append(notes, "by the backstop")
		}
		if k.Starved {
			notes = append(notes, "starved")
		}
		if len(notes) > 0 {
			s += " (" + strings.Join(notes, ", ") + ")"
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// timeoutLines give, for each level, how late the kills of its runs
// stopped at their time limit landed, and list the probes starved of CPU.
func timeoutLines(p *printer, r *RunInfo, jobs int) {
	if len(r.KillLate) > 0 {
		p.printf("\n")
		p.subheading("Kills at the time limit")
		var rows [][]string
		row := func(level int, of string, late, initLate []int64, backstop int) {
			if len(late) > 0 {
				woke := "-"
				if len(initLate) > 0 {
					woke = fmt.Sprintf("%d: %d/%d/%d ms", len(initLate), Percentile(initLate, 50), Percentile(initLate, 99), Percentile(initLate, 100))
				}
				rows = append(rows, []string{fmt.Sprintf("L%d", level), of, itoa(len(late)),
					ms(Percentile(late, 50)), ms(Percentile(late, 99)), ms(Percentile(late, 100)), itoa(backstop), woke})
			}
		}
		for _, k := range r.KillLate {
			row(k.Level, "baseline", k.BaselineMS, k.BaselineInitMS, k.BaselineBackstop)
			row(k.Level, "defects", k.DefectsMS, k.DefectsInitMS, k.DefectsBackstop)
		}
		p.table([]string{"level", "runs of", "runs", "p50 late", "p99 late", "max late", "ended by the backstop", "init woke late (runs: p50/p99/max)"}, rows)
		p.printf("How long after its deadline the host saw each run's program end, over every run stopped at its wall clock in the probes' workers (up to %d probes at once); and, of the runs the init stopped (L6), how late the init itself woke, by its own clock: the rest is the kernel ending the namespace and the host noticing. The baseline's are the correct sandbox's; a defect may stop runs late on purpose.\n", jobs)
		for _, k := range r.KillLate {
			if len(k.Latest) > 0 {
				p.printf("Latest at L%d: %s.\n", k.Level, latestKills(k.Latest))
			}
		}
	}
	if len(r.Starved) > 0 {
		p.printf("\n")
		p.subheading("Starved probes")
		rows := make([][]string, 0, len(r.Starved))
		for _, s := range r.Starved {
			runs := itoa(s.Runs)
			if s.ClockStops > 0 {
				runs += fmt.Sprintf(" (%d at a clock it does not test)", s.ClockStops)
			}
			if s.TimedEscape {
				runs += " (escaped by a margin of time)"
			}
			rows = append(rows, []string{s.Probe, yesNo(s.Defect == "", "(baseline)", s.Defect), runs, yesNo(s.RanTwice, "ran again, the second verdict counts", "stands")})
		}
		p.table([]string{"probe", "defect", "starved runs", "verdict"}, rows)
		p.printf("A starved run was stopped at its time limit with one of its threads having waited for a CPU for half of it or more: the machine's load, not the program, decided the stop. A check whose promise is not about time counts its runs stopped at its clock too. A failure with such runs, an attack cell that read stopped with a starved one, or one that escaped only by its judge's margin of time where the correct sandbox stops it, ran again, alone.\n")
	}
}

func ms(v int64) string { return fmt.Sprintf("%d ms", v) }

// timingLines say where each phase's time went, by kind of process: what
// a faster run has to cut, measured on every run.
func timingLines(p *printer, r *RunInfo) {
	if len(r.Timing) == 0 {
		return
	}
	p.printf("\n")
	p.subheading("Where the time went")
	head := []string{"", "elapsed", "harness CPU", "workers", "worker start CPU", "worker CPU", "inits and helpers CPU", "programs CPU", "program runs", "programs wall", "programs off CPU"}
	rows := make([][]string, 0, len(r.Timing))
	for _, t := range r.Timing {
		rows = append(rows, []string{t.Phase, secs(t.ElapsedMS), secs(t.HarnessCPUMS), itoa(t.ProbeRuns),
			secs(t.WorkerStartCPUMS), secs(t.WorkerCPUMS), secs(t.HelperCPUMS), secs(t.ProgramCPUMS),
			itoa(t.ProgramRuns), secs(t.ProgramWallMS), secs(max(0, t.ProgramWallMS-t.ProgramCPUMS))})
	}
	p.table(head, rows)
	p.printf("Each worker runs one probe: its CPU is split into its start (exec, the Go runtime and package initialisers), its own work after that (fixtures, judges and their samplers, supervising runs), the inits and helpers it waited for, and the programs. A program's time off CPU is its wall time less its CPU time: waits on clocks, and for a CPU.\n")
}

// secs is a duration in milliseconds as seconds, to a tenth.
func secs(ms int64) string { return fmt.Sprintf("%.1f s", float64(ms)/1000) }
