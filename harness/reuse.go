package harness

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"time"

	"sandboxlab/mutants"
	"sandboxlab/report"
	"sandboxlab/verdict"
)

// reuse is what an incremental run may take from an earlier run's report
// (mutate --incremental): for each probe whose inputs are unchanged, its
// verdict on the correct sandbox with its coverage, and its verdict with
// each defect on that ran it. A probe's verdict is reused, with a defect
// on or not, only when the library, the machinery, the environment and
// the probe's own and shared files are what they were; the facts reused
// are judged again against the predictions as they are now.
type reuse struct {
	from, started string
	// changed says what changed since, for the report; none is set when
	// nothing at all can be reused.
	changed []string
	none    bool
	// same holds the probes (check ids and cell names) whose inputs are
	// unchanged.
	same     map[string]bool
	checks   map[string]report.Check
	cells    map[string]report.Cell
	coverage map[string]report.ProbeCoverage
	// flaky holds "defect|probe" for the earlier run's flaky probes
	// (defect "" for the baseline): a flake is no verdict to reuse.
	flaky     map[string]bool
	broken    map[verdict.Suite]bool
	defects   map[string]report.Defect
	selection bool
	prev      *report.Mutation
}

// planReuse compares the earlier run prev with this run's inputs and
// settings and returns what may be reused, for probes.
func (r *Runner) planReuse(prev *report.Mutation, probes []Probe) *reuse {
	ru := &reuse{same: map[string]bool{}, prev: prev}
	if prev.Run != nil {
		ru.from, ru.started = prev.Run.ID, prev.Run.Started
	}
	if why := r.reuseBarrier(prev); len(why) > 0 {
		ru.changed, ru.none = why, true
		return ru
	}
	ru.changed = probeChanges(prev.Run.Inputs, r.Inputs)
	ru.selection = prev.Run.Selection
	ru.checks, ru.cells = map[string]report.Check{}, map[string]report.Cell{}
	for _, c := range prev.Baseline.Checks.Checks {
		ru.checks[c.ID] = c
	}
	for _, c := range prev.Baseline.Attacks.Cells {
		ru.cells[c.Name()] = c
	}
	ru.coverage = map[string]report.ProbeCoverage{}
	for _, c := range prev.Run.Coverage {
		ru.coverage[c.Probe] = c
	}
	ru.flaky = map[string]bool{}
	for _, f := range prev.Flaky {
		ru.flaky[f.Defect+"|"+f.Probe] = true
	}
	ru.broken = map[verdict.Suite]bool{}
	for _, s := range prev.Suites {
		if !s.BaselineOK {
			ru.broken[s.Suite.OrCourse()] = true
			ru.changed = append(ru.changed, fmt.Sprintf("the %s suite's baseline was broken in that run: its probes run again", s.Suite.OrCourse()))
		}
	}
	ru.defects = map[string]report.Defect{}
	for _, d := range prev.Defects {
		ru.defects[d.ID] = d
	}
	for _, p := range probes {
		pkg, id := probeInputKey(p)
		ru.same[p.ID] = sameProbe(prev.Run.Inputs, r.Inputs, pkg, id)
	}
	return ru
}

// reuseBarrier says why nothing of prev can be reused, if so: no inputs
// on either side, a build that cannot be vouched for, another library,
// machinery or environment, other settings, or no baseline.
func (r *Runner) reuseBarrier(prev *report.Mutation) []string {
	switch {
	case prev.Run == nil || prev.Run.Inputs == nil:
		return []string{"the earlier report records no input digests (made before --incremental, or merged from shards measured apart)"}
	case r.Inputs == nil:
		return []string{"this run records no input digests"}
	case prev.Baseline.Checks == nil || prev.Baseline.Attacks == nil:
		return []string{"the earlier run has no baseline"}
	}
	pi, ci := prev.Run.Inputs, r.Inputs
	for _, in := range []*report.Inputs{pi, ci} {
		if why, ok := in.Environment[unvouched]; ok {
			return []string{"the build cannot be vouched for: " + why}
		}
	}
	var why []string
	for _, g := range []struct{ key, words string }{
		{groupLibrary, "the library (sandbox/)"},
		{groupMachinery, "the machinery (mutants/, verdict/, the worker, the result model, go.mod)"},
	} {
		if pi.Shared[g.key] != ci.Shared[g.key] {
			why = append(why, g.words)
		}
	}
	why = append(why, environmentChanges(pi.Environment, ci.Environment)...)
	if prev.Run.Repeat != r.repeats() {
		why = append(why, fmt.Sprintf("the earlier run ran each probe %d times, this one %d", prev.Run.Repeat, r.repeats()))
	}
	if prev.Run.Selection == r.NoSelect {
		why = append(why, "the earlier run selected probes otherwise (--no-select)")
	}
	if r.Masking {
		why = append(why, "the masking search needs what each probe's run says of its layers, which a report does not keep")
	}
	return why
}

// environmentChanges lists the fields of the fingerprint that differ.
func environmentChanges(prev, cur map[string]string) []string {
	keys := map[string]bool{}
	for k := range prev {
		keys[k] = true
	}
	for k := range cur {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		if prev[k] != cur[k] {
			out = append(out, fmt.Sprintf("environment: %s (%s, now %s)", k, orAbsent(prev[k]), orAbsent(cur[k])))
		}
	}
	sort.Strings(out)
	return out
}

func orAbsent(s string) string {
	if s == "" {
		return "absent"
	}
	return s
}

// probeInputKey is the package and id a probe's inputs are kept under:
// a check's own, an attack's for each of its cells.
func probeInputKey(p Probe) (pkg, id string) {
	if c, err := verdict.ParseCell(p.ID); err == nil {
		return "attacks", c.Attack
	}
	return "checks", p.ID
}

// sameProbe reports whether a probe's own files and its package's shared
// files are what they were.
func sameProbe(prev, cur *report.Inputs, pkg, id string) bool {
	k := probeKey(pkg, id)
	was, ok := prev.Probes[k]
	return ok && was == cur.Probes[k] && prev.Shared[pkg] == cur.Shared[pkg]
}

// probeChanges says which probes' files changed, package by package: the
// files they share, or each probe's own (a new probe among them).
func probeChanges(prev, cur *report.Inputs) []string {
	var out []string
	for _, pkg := range probePackages {
		if prev.Shared[pkg.dir] != cur.Shared[pkg.dir] {
			out = append(out, "the files the "+pkg.dir+" share (every one of them runs again)")
			continue
		}
		var ids []string
		for k, d := range cur.Probes {
			if id, ok := cutPackage(k, pkg.dir); ok && prev.Probes[k] != d {
				if _, was := prev.Probes[k]; was {
					ids = append(ids, id)
				} else {
					ids = append(ids, id+" (new)")
				}
			}
		}
		sort.Strings(ids)
		for _, id := range ids {
			out = append(out, pkg.dir+"/"+id)
		}
	}
	return out
}

func cutPackage(key, dir string) (string, bool) {
	if len(key) > len(dir)+1 && key[:len(dir)+1] == dir+"/" {
		return key[len(dir)+1:], true
	}
	return "", false
}

// baseline returns the earlier run's verdict of probe p on the correct
// sandbox, with its coverage and cost, when it may be reused: its inputs
// are unchanged, it was measured, its suite's baseline held and it did
// not flake.
func (ru *reuse) baseline(p Probe) (*ProbeResult, report.ProbeCoverage, bool) {
	if ru == nil || ru.none || !ru.same[p.ID] || ru.broken[p.Suite] || ru.flaky["|"+p.ID] {
		return nil, report.ProbeCoverage{}, false
	}
	cov, ok := ru.coverage[p.ID]
	if !ok {
		return nil, cov, false
	}
	res := &ProbeResult{Reached: slices.Clone(cov.Reached)}
	if p.IsCell() {
		c, ok := ru.cells[p.ID]
		if !ok {
			return nil, cov, false
		}
		res.Cell = &c
	} else {
		c, ok := ru.checks[p.ID]
		if !ok {
			return nil, cov, false
		}
		c.Suite = p.Suite
		res.Check = &c
	}
	return res, cov, true
}

// defectProbe returns the earlier run's verdict of probe p with defect d
// on, when it may be reused: p's baseline verdict was (base is the
// baseline's result of p), and d's earlier run ran p and gave a verdict.
// What is known of it is what the report kept: whether the check failed
// (FailedChecks) or the cell escaped where the baseline stops it
// (EscapedAttacks), and what the host saw where an unexpected result named
// the probe (Seen).
func (ru *reuse) defectProbe(d mutants.Defect, p Probe, base *ProbeResult, reused bool) (*ProbeResult, bool) {
	if ru == nil || ru.none || !reused || ru.flaky[string(d.ID)+"|"+p.ID] {
		return nil, false
	}
	pd, ok := ru.defects[string(d.ID)]
	if !ok || pd.Outcome == "" || pd.Outcome.NoVerdict() || pd.Outcome == verdict.Untestable ||
		pd.Suite.OrCourse() != d.Suite.OrCourse() || !ru.ran(pd, p.ID) {
		return nil, false
	}
	evidence := fmt.Sprintf("(reused from run %s, which did not keep what the host saw)", ru.from)
	for _, s := range pd.Seen {
		if s.Probe == p.ID {
			evidence = s.Evidence
		}
	}
	res := &ProbeResult{}
	if base.Check != nil {
		c := *base.Check
		c.Passed, c.Evidence, c.MS = !slices.Contains(pd.FailedChecks, p.ID), evidence, 0
		res.Check = &c
	} else {
		c := *base.Cell
		// A cell the correct sandbox lets through is no new escape
		// whatever the defect does, and the report keeps only new ones.
		c.Escaped = c.Escaped || slices.Contains(pd.EscapedAttacks, p.ID)
		c.Evidence, c.MS = evidence, 0
		if c.Escaped {
			c.StoppedBy = ""
		}
		res.Cell = &c
	}
	return res, true
}

// ran reports whether the earlier run ran probe with defect pd on: the
// probes that reach its site, or without selection every probe of its
// suite.
func (ru *reuse) ran(pd report.Defect, probe string) bool {
	if ru.selection {
		return slices.Contains(pd.Reached, probe)
	}
	return slices.Contains(ru.prev.Probes(pd.Suite.OrCourse()), probe)
}

// predictionChanged reports whether a defect's prediction changed since
// the earlier run prev: its reused facts were judged against the new one.
func predictionChanged(prev *report.Mutation, d report.Defect) bool {
	i := slices.IndexFunc(prev.Defects, func(pd report.Defect) bool { return pd.ID == d.ID })
	if i < 0 {
		return false
	}
	pd := prev.Defects[i]
	return !slices.Equal(pd.PredictedChecks, d.PredictedChecks) || !slices.Equal(pd.PredictedAttacks, d.PredictedAttacks) ||
		knownString(pd.Known) != knownString(d.Known)
}

func knownString(k *report.Known) string {
	if k == nil {
		return ""
	}
	return k.String()
}

// summary is the report's account of what was reused.
func (ru *reuse) summary(m *report.Mutation, baselineRuns int) *report.Reused {
	s := &report.Reused{From: ru.from, FromStarted: ru.started, Changed: ru.changed, BaselineProbeRuns: baselineRuns}
	if s.Changed == nil {
		s.Changed = []string{}
	}
	for _, d := range m.Defects {
		if d.Reuse == nil {
			continue
		}
		s.ProbeRuns += len(d.Reuse.Probes) * max(1, m.Run.Repeat)
		if d.Probes == 0 {
			s.Defects++
		}
		if d.Reuse.Rejudged {
			s.Rejudged = append(s.Rejudged, d.ID)
		}
	}
	return s
}

// newRunID names a run by its start and a random suffix.
func newRunID(start time.Time) string {
	return start.UTC().Format("20060102T150405Z") + "-" + randomHex(3)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
