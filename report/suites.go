package report

import (
	"strings"

	"sandboxlab/verdict"
)

// A report holds the members of one suite or several: the course's,
// pinned as the course notes have them, and the hardening suite's. Every
// renderer shows each suite's part on its own, the course's first and
// exactly as a report of the course alone shows it, then the others,
// each under a heading of its own. A report from before suites (no
// member names its suite) is the course's.

// presentSuites returns the suites named in suites (the zero one read as
// the course), each once, in report order: those of verdict.Suites in
// its order, then any other in the order it first appears.
func presentSuites(suites []verdict.Suite) []verdict.Suite {
	seen := map[verdict.Suite]bool{}
	for _, s := range suites {
		seen[s.OrCourse()] = true
	}
	var out []verdict.Suite
	for _, s := range verdict.Suites {
		if seen[s] {
			out = append(out, s)
			delete(seen, s)
		}
	}
	for _, s := range suites {
		if s = s.OrCourse(); seen[s] {
			out = append(out, s)
			delete(seen, s)
		}
	}
	return out
}

// suiteWord is the suite's name with a capital: "Hardening".
func suiteWord(s verdict.Suite) string {
	name := string(s.OrCourse())
	return strings.ToUpper(name[:1]) + name[1:]
}

// junitName names a JUnit suite or class of suite s: base for the
// course's (as before there were suites, so that CI jobs reading it see
// no change), base.<suite> for another's.
func junitName(base string, s verdict.Suite) string {
	if s.OrCourse() == verdict.Course {
		return base
	}
	return base + "." + string(s)
}

// suiteProperty names the suite of a JUnit suite other than the course's.
func suiteProperty(props []Property, s verdict.Suite) []Property {
	if s.OrCourse() != verdict.Course {
		props = append(props, Property{"suite", string(s)})
	}
	return props
}

// suites returns the suites of the checks, in report order.
func (c *Checks) suites() []verdict.Suite {
	var ss []verdict.Suite
	for _, ch := range c.Checks {
		ss = append(ss, ch.Suite)
	}
	return presentSuites(ss)
}

// InSuite returns the checks of suite s, in report order, tallied.
func (c *Checks) InSuite(s verdict.Suite) *Checks {
	out := &Checks{Identity: c.Identity, Defect: c.Defect, Checks: []Check{}}
	for _, ch := range c.Checks {
		if ch.Suite.OrCourse() == s.OrCourse() {
			out.Checks = append(out.Checks, ch)
		}
	}
	out.Tally()
	return out
}

// suites returns the suites of the attacks, in report order.
func (a *Attacks) suites() []verdict.Suite {
	var ss []verdict.Suite
	for _, at := range a.Attacks {
		ss = append(ss, a.SuiteOf(at))
	}
	return presentSuites(ss)
}

// InSuite returns the matrix of suite s: its attacks, at the levels run
// that s has (the course's matrix is L0–L5 whatever else ran), with their
// cells, first stops and expectations as a finds them.
func (a *Attacks) InSuite(s verdict.Suite) *Attacks {
	s = s.OrCourse()
	out := &Attacks{Identity: a.Identity, Defect: a.Defect, Attacks: []string{}, Levels: []int{}, Cells: []Cell{},
		FirstStopped: map[string]int{}}
	if a.Suites != nil {
		out.Suites = map[string]verdict.Suite{}
	}
	if a.Expected != nil {
		out.Expected = map[string]int{}
	}
	for _, at := range a.Attacks {
		if a.SuiteOf(at) != s {
			continue
		}
		out.Attacks = append(out.Attacks, at)
		if a.Suites != nil {
			out.Suites[at] = a.Suites[at]
		}
		if l, ok := a.FirstStopped[at]; ok {
			out.FirstStopped[at] = l
		}
		if why, ok := a.NotApplicable[at]; ok {
			if out.NotApplicable == nil {
				out.NotApplicable = map[string]string{}
			}
			out.NotApplicable[at] = why
		}
		if l, ok := a.Expected[at]; ok {
			out.Expected[at] = l
		}
	}
	for _, l := range a.Levels {
		if s.HasLevel(l) {
			out.Levels = append(out.Levels, l)
		}
	}
	for _, c := range a.Cells {
		if a.SuiteOf(c.Attack) == s && s.HasLevel(c.Level) {
			out.Cells = append(out.Cells, c)
		}
	}
	return out
}

// defectsIn returns the defects of suite s, in report order.
func defectsIn(defects []Defect, s verdict.Suite) []Defect {
	var out []Defect
	for _, d := range defects {
		if d.Suite.OrCourse() == s.OrCourse() {
			out = append(out, d)
		}
	}
	return out
}

// mutationPart is one suite's part of a mutation report, as the
// renderers show it.
type mutationPart struct {
	res     SuiteResult
	defects []Defect
	// checks and attacks are the suite's baseline (nil when the baseline
	// run gave none).
	checks  *Checks
	attacks *Attacks
	// ms is the time of the suite's baseline.
	ms int64
}

// parts splits the report by suite, in report order: the suites of
// Suites and of every member. A report with no member at all is one empty
// part, the course's. Where Suites has no entry for a suite (a report
// from before suites), the part takes the run's baseline and gate, and
// the run's summary when it is the only part.
func (m *Mutation) parts() []mutationPart {
	var named []verdict.Suite
	for _, r := range m.Suites {
		named = append(named, r.Suite)
	}
	for _, d := range m.Defects {
		named = append(named, d.Suite)
	}
	if c := m.Baseline.Checks; c != nil {
		named = append(named, c.suites()...)
	}
	if a := m.Baseline.Attacks; a != nil {
		named = append(named, a.suites()...)
	}
	suites := presentSuites(named)
	if len(suites) == 0 {
		suites = []verdict.Suite{verdict.Course}
	}
	attacks := m.Baseline.Attacks
	if attacks != nil && len(attacks.Expected) == 0 && len(m.Baseline.Expected) > 0 {
		withExpected := *attacks // the predictions' baseline is the expectation here
		withExpected.Expected = m.Baseline.Expected
		attacks = &withExpected
	}
	parts := make([]mutationPart, 0, len(suites))
	for _, s := range suites {
		pt := mutationPart{defects: defectsIn(m.Defects, s), ms: m.Baseline.MS}
		res, ok := m.SuiteResult(s)
		if !ok {
			res = SuiteResult{Suite: s, BaselineOK: m.Baseline.OK, Problems: m.Baseline.Problems, Summary: tally(pt.defects), Gate: m.Gate}
			if len(suites) == 1 {
				res.Summary = m.Summary
			}
		}
		pt.res = res
		if m.Baseline.Checks != nil {
			pt.checks = m.Baseline.Checks.InSuite(s)
		}
		if attacks != nil {
			pt.attacks = attacks.InSuite(s)
		}
		if len(suites) > 1 {
			// The baseline ran every suite at once; its share is what its
			// checks and cells took.
			pt.ms = 0
			if pt.checks != nil {
				for _, c := range pt.checks.Checks {
					pt.ms += c.MS
				}
			}
			if pt.attacks != nil {
				for _, c := range pt.attacks.Cells {
					pt.ms += c.MS
				}
			}
		}
		parts = append(parts, pt)
	}
	return parts
}

// brokenSuites names the suites whose baseline is broken.
func brokenSuites(parts []mutationPart) []string {
	var names []string
	for _, pt := range parts {
		if !pt.res.BaselineOK {
			names = append(names, string(pt.res.Suite))
		}
	}
	return names
}

// joinAnd joins words as a sentence does: "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// isCourse reports whether s is the course's suite.
func isCourse(s verdict.Suite) bool { return s.OrCourse() == verdict.Course }
