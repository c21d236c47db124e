// Package reporttest is for tests of code that writes reports: CrossCheck
// reads a mutation report's files back and checks that every format
// carries the same facts, and Tables reads the tables of a text or
// markdown rendering back into cells.
//
// It reads the files as their consumers do (a JSON decoder, a JUnit
// reader, a person reading a table, the Stryker component, a browser),
// so it holds the names those consumers rely on itself (the summary
// table's header, the JUnit test suites' and flaky cases' names) rather
// than borrowing the renderer's: a renderer that renames one breaks its
// readers, and the cross-check says so. Only tests import it; the
// architecture test keeps it out of every binary.
package reporttest

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"sandboxlab/report"
	"sandboxlab/verdict"
)

// CrossCheck reads the mutation report that --out wrote into dir
// (mutate.json, mutate.txt, mutate.md, mutate.junit.xml, mutate.html,
// mutate.stryker.json) and checks that the files carry the same facts:
// the same defects with the same outcomes, the same summary counts and
// gate, JUnit counts that match the summary, for each suite of the run,
// and a Stryker mutant per defect with the status its run gives. It
// returns every disagreement it finds, joined.
func CrossCheck(dir string) error {
	read := func(f report.Format) ([]byte, error) {
		return os.ReadFile(filepath.Join(dir, "mutate."+f.Ext()))
	}
	data, err := read(report.JSON)
	if err != nil {
		return fmt.Errorf("cross-check: %w", err)
	}
	var m report.Mutation
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("cross-check: parsing mutate.json: %w", err)
	}
	errs := []error{crossCheckJSON(&m)}
	checks := []struct {
		format report.Format
		check  func(*report.Mutation, []byte) error
	}{
		{report.JUnit, crossCheckJUnit},
		{report.Text, func(m *report.Mutation, b []byte) error { return crossCheckTables(m, string(b), false) }},
		{report.Markdown, func(m *report.Mutation, b []byte) error { return crossCheckTables(m, string(b), true) }},
		{report.Stryker, crossCheckStryker},
		{report.HTML, func(m *report.Mutation, b []byte) error { return crossCheckHTML(m, string(b)) }},
	}
	for _, c := range checks {
		b, err := read(c.format)
		if err != nil {
			errs = append(errs, fmt.Errorf("cross-check: %w", err))
			continue
		}
		if err := c.check(&m, b); err != nil {
			errs = append(errs, fmt.Errorf("mutate.%s: %w", c.format.Ext(), err))
		}
	}
	return errors.Join(errs...)
}

// crossCheckJSON checks that the JSON agrees with itself: its summaries
// are its defects' tally, and its gates and suites hold together.
func crossCheckJSON(m *report.Mutation) error {
	var errs []error
	tallied := *m // a copy: Tally only sets the summaries
	tallied.Suites = slices.Clone(m.Suites)
	tallied.Tally()
	if tallied.Summary != m.Summary {
		errs = append(errs, fmt.Errorf("mutate.json: summary %+v, but its defects tally to %+v", m.Summary, tallied.Summary))
	}
	if err := crossCheckSuites(m, tallied.Suites); err != nil {
		errs = append(errs, fmt.Errorf("mutate.json: %w", err))
	}
	return errors.Join(errs...)
}

// crossCheckSuites checks the JSON's gates and suites: the gate is the
// one its policy gives, every defect's suite has an entry, each entry's
// summary is its defects' tally and its gate the one its results give,
// and the run's baseline and gate are those of its suites.
func crossCheckSuites(m *report.Mutation, tallied []report.SuiteResult) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if want := m.FailOn.Decide(m.Baseline.OK, m.Summary.Unexpected, m.Summary.UnexpectedEscapes, len(m.Flaky)); m.Gate != want {
		fail("the gate is %s, but under --fail-on %s the run's results give %s", m.Gate, m.FailOn, want)
	}
	if len(m.Suites) == 0 {
		return errors.Join(errs...) // a report from before suites
	}
	allOK, anyFails := true, false
	for i, r := range m.Suites {
		if r.Summary != tallied[i].Summary {
			fail("suite %s: summary %+v, but its defects tally to %+v", r.Suite, r.Summary, tallied[i].Summary)
		}
		if want := m.FailOn.Decide(r.BaselineOK, r.Summary.Unexpected, r.Summary.UnexpectedEscapes, len(m.FlakesIn(r.Suite))); r.Gate != want {
			fail("suite %s: the gate is %s, but under --fail-on %s its results give %s", r.Suite, r.Gate, m.FailOn, want)
		}
		allOK = allOK && r.BaselineOK
		anyFails = anyFails || r.Gate == verdict.Fail
	}
	for _, d := range m.Defects {
		if _, ok := m.SuiteResult(d.Suite.OrCourse()); !ok {
			fail("defect %s is of suite %s, which has no entry in suites", d.ID, d.Suite.OrCourse())
		}
	}
	if allOK != m.Baseline.OK {
		fail("the baseline is %s, its suites' baselines say %s", yesNo(m.Baseline.OK, "ok", "broken"), yesNo(allOK, "ok", "broken"))
	}
	if anyFails != (m.Gate == verdict.Fail) {
		fail("the gate is %s, but %s suite's gate fails", m.Gate, yesNo(anyFails, "a", "no"))
	}
	return errors.Join(errs...)
}

// part is one suite's share of the run, as every rendering shows it:
// its result and its defects, in report order.
type part struct {
	res     report.SuiteResult
	defects []report.Defect
}

// parts splits the run by suite, in report order.
func parts(m *report.Mutation) []part {
	var out []part
	for _, r := range m.SuiteResults() {
		pt := part{res: r}
		for _, d := range m.Defects {
			if d.Suite.OrCourse() == r.Suite.OrCourse() {
				pt.defects = append(pt.defects, d)
			}
		}
		out = append(out, pt)
	}
	return out
}

// junitSuiteName is the name CI jobs find a suite's mutation results by:
// "mutate" for the course's (as before there were suites),
// "mutate.<suite>" for another's.
func junitSuiteName(s verdict.Suite) string {
	if s.OrCourse() == verdict.Course {
		return "mutate"
	}
	return "mutate." + string(s)
}

// flakeCaseName is the name of a flaky probe's JUnit test case.
func flakeCaseName(f report.Flake) string {
	if f.Defect == "" {
		return "flaky " + f.Probe
	}
	return "flaky " + f.Probe + " with " + f.Defect
}

// crossCheckJUnit checks the JUnit file against the model: one test
// suite per suite of the run, each with one case for its baseline and
// one per defect, each with the status DefectStatus gives, and counts
// that add up and match the suite's summary.
func crossCheckJUnit(m *report.Mutation, data []byte) error {
	var s report.TestSuites
	if err := xml.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("not valid XML: %w", err)
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	parts := parts(m)
	if len(s.Suites) != len(parts) {
		return fmt.Errorf("want %d testsuite(s), one per suite of the run, found %d", len(parts), len(s.Suites))
	}
	var tests, failures, errCount, skipped int
	for i, pt := range parts {
		suite := s.Suites[i]
		if want := junitSuiteName(pt.res.Suite); suite.Name != want {
			fail("testsuite %d is named %q, want %q", i+1, suite.Name, want)
		}
		if err := crossCheckJUnitSuite(pt, m.FlakesIn(pt.res.Suite), suite); err != nil {
			fail("testsuite %s: %w", suite.Name, err)
		}
		tests, failures, errCount, skipped = tests+suite.Tests, failures+suite.Failures, errCount+suite.Errors, skipped+suite.Skipped
	}
	if s.Tests != tests || s.Failures != failures || s.Errors != errCount || s.Skipped != skipped {
		fail("testsuites counts differ from the sums of its testsuites'")
	}
	return errors.Join(errs...)
}

// crossCheckJUnitSuite checks one suite's test suite against its part of
// the model: a case per defect, flaky probe and the baseline, each with
// its status, and counts that match the cases and the summary.
func crossCheckJUnitSuite(pt part, flakes []report.Flake, suite report.TestSuite) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	status, counts := map[string]string{}, map[string]int{}
	for _, c := range suite.Cases {
		if _, dup := status[c.Name]; dup {
			fail("testcase %s appears twice", c.Name)
		}
		status[c.Name] = c.Status()
		counts[c.Status()]++
	}
	if got, want := len(suite.Cases), len(pt.defects)+1+len(flakes); got != want {
		fail("%d testcases, want %d (the baseline, %d defects and %d flaky probes)", got, want, len(pt.defects), len(flakes))
	}
	for _, f := range flakes {
		if got := status[flakeCaseName(f)]; got != report.StatusFailed {
			fail("flaky probe %s is %q, want failed", flakeCaseName(f), got)
		}
	}
	if suite.Tests != len(suite.Cases) || suite.Failures != counts[report.StatusFailed] || suite.Errors != counts[report.StatusError] || suite.Skipped != counts[report.StatusSkipped] {
		fail("testsuite says tests=%d failures=%d errors=%d skipped=%d, its testcases count %d, %d, %d, %d",
			suite.Tests, suite.Failures, suite.Errors, suite.Skipped, len(suite.Cases), counts[report.StatusFailed], counts[report.StatusError], counts[report.StatusSkipped])
	}
	if got, ok := status["baseline"]; !ok {
		fail("no testcase for the baseline")
	} else if want := yesNo(pt.res.BaselineOK, report.StatusPassed, report.StatusFailed); got != want {
		fail("baseline testcase is %s, the JSON says the baseline is %s", got, yesNo(pt.res.BaselineOK, "ok", "broken"))
	}
	for _, d := range pt.defects {
		got, ok := status[d.ID]
		switch want := report.DefectStatus(d); {
		case !ok:
			fail("no testcase for defect %s", d.ID)
		case got != want:
			fail("defect %s is %s, want %s (outcome %s, %d unexpected)", d.ID, got, want, d.Outcome, len(d.Unexpected))
		}
	}
	// Against the summary: every defect with something unexpected fails
	// or errs (an error is a run with no verdict, counted as hung), and a
	// broken baseline is one more failure.
	brokenBase := 0
	if !pt.res.BaselineOK {
		brokenBase = 1
	}
	sum := pt.res.Summary
	if got, want := counts[report.StatusFailed]+counts[report.StatusError], sum.Unexpected+brokenBase+len(flakes); got != want {
		fail("%d failures and errors, the summary has %d defects with unexpected results", got, sum.Unexpected)
	}
	if got, want := counts[report.StatusError], sum.Hung; got != want {
		fail("%d errors, the summary has %d hung or failed runs", got, want)
	}
	return errors.Join(errs...)
}

func yesNo(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}
