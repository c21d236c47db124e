package report

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sandboxlab/verdict"
)

// CrossCheck reads the mutation report that --out wrote into dir
// (mutate.json, mutate.txt, mutate.md, mutate.junit.xml, mutate.html,
// mutate.stryker.json) and checks that the files carry the same facts:
// the same defects with the same outcomes, the same summary counts and
// gate, JUnit counts that match the summary, for each suite of the run,
// and a Stryker mutant per defect with the status its run gives. It returns every disagreement
// it finds, joined.
func CrossCheck(dir string) error {
	read := func(f Format) ([]byte, error) {
		return os.ReadFile(filepath.Join(dir, "mutate."+f.Ext()))
	}
	data, err := read(JSON)
	if err != nil {
		return fmt.Errorf("cross-check: %w", err)
	}
	var m Mutation
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("cross-check: parsing mutate.json: %w", err)
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	// The JSON agrees with itself: its summaries are its defects' tally.
	tallied := m // a copy: Tally only sets the summaries
	tallied.Suites = slices.Clone(m.Suites)
	tallied.Tally()
	if tallied.Summary != m.Summary {
		fail("mutate.json: summary %+v, but its defects tally to %+v", m.Summary, tallied.Summary)
	}
	if err := crossCheckSuites(&m, tallied.Suites); err != nil {
		fail("mutate.json: %w", err)
	}

	if x, err := read(JUnit); err != nil {
		fail("cross-check: %w", err)
	} else if err := crossCheckJUnit(&m, x); err != nil {
		fail("mutate.junit.xml: %w", err)
	}
	for _, f := range []Format{Text, Markdown} {
		b, err := read(f)
		if err != nil {
			fail("cross-check: %w", err)
			continue
		}
		if err := crossCheckTables(&m, string(b), f == Markdown); err != nil {
			fail("mutate.%s: %w", f.Ext(), err)
		}
	}
	if b, err := read(Stryker); err != nil {
		fail("cross-check: %w", err)
	} else if err := crossCheckStryker(&m, b); err != nil {
		fail("mutate.%s: %w", Stryker.Ext(), err)
	}
	if b, err := read(HTML); err != nil {
		fail("cross-check: %w", err)
	} else if err := crossCheckHTML(&m, string(b)); err != nil {
		fail("mutate.%s: %w", HTML.Ext(), err)
	}
	return errors.Join(errs...)
}

// crossCheckSuites checks the JSON's gates and suites: the gate is the
// one its policy gives, every defect's suite has an entry, each entry's
// summary is its defects' tally and its gate the one its results give,
// and the run's baseline and gate are those of its suites.
func crossCheckSuites(m *Mutation, tallied []SuiteResult) error {
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

// crossCheckJUnit checks the JUnit file against the model: one test
// suite per suite of the run, each with one case for its baseline and
// one per defect, each with the status DefectStatus gives, and counts
// that add up and match the suite's summary.
func crossCheckJUnit(m *Mutation, data []byte) error {
	var s TestSuites
	if err := xml.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("not valid XML: %w", err)
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	parts := m.parts()
	if len(s.Suites) != len(parts) {
		return fmt.Errorf("want %d testsuite(s), one per suite of the run, found %d", len(parts), len(s.Suites))
	}
	var tests, failures, errCount, skipped int
	for i, pt := range parts {
		suite := s.Suites[i]
		if want := junitName("mutate", pt.res.Suite); suite.Name != want {
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
// the model.
func crossCheckJUnitSuite(pt mutationPart, flakes []Flake, suite TestSuite) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	status := map[string]string{}
	counts := map[string]int{}
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
		if got := status[flakeName(f)]; got != StatusFailed {
			fail("flaky probe %s is %q, want failed", flakeName(f), got)
		}
	}
	if suite.Tests != len(suite.Cases) || suite.Failures != counts[StatusFailed] || suite.Errors != counts[StatusError] || suite.Skipped != counts[StatusSkipped] {
		fail("testsuite says tests=%d failures=%d errors=%d skipped=%d, its testcases count %d, %d, %d, %d",
			suite.Tests, suite.Failures, suite.Errors, suite.Skipped, len(suite.Cases), counts[StatusFailed], counts[StatusError], counts[StatusSkipped])
	}
	wantBase := yesNo(pt.res.BaselineOK, StatusPassed, StatusFailed)
	if got, ok := status["baseline"]; !ok {
		fail("no testcase for the baseline")
	} else if got != wantBase {
		fail("baseline testcase is %s, the JSON says the baseline is %s", got, yesNo(pt.res.BaselineOK, "ok", "broken"))
	}
	for _, d := range pt.defects {
		got, ok := status[d.ID]
		switch want := DefectStatus(d); {
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
	if got, want := counts[StatusFailed]+counts[StatusError], sum.Unexpected+brokenBase+len(flakes); got != want {
		fail("%d failures and errors, the summary has %d defects with unexpected results", got, sum.Unexpected)
	}
	if got, want := counts[StatusError], sum.Hung; got != want {
		fail("%d errors, the summary has %d hung or failed runs", got, want)
	}
	return errors.Join(errs...)
}

// crossCheckTables finds each suite's summary table and per-defect table
// in a text or markdown rendering, in order, and checks them against the
// model.
func crossCheckTables(m *Mutation, doc string, md bool) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	tables := parseTables(doc, md)
	summaries, defectTables := findTables(tables, "defects"), findTables(tables, "defect")
	parts := m.parts()
	if len(summaries) == 0 {
		return errors.New("no summary table (one headed \"defects\")")
	}
	if len(summaries) != len(parts) {
		fail("%d summary tables, want %d (one per suite of the run)", len(summaries), len(parts))
	}
	var withDefects []mutationPart
	for i, pt := range parts {
		if len(pt.defects) > 0 {
			withDefects = append(withDefects, pt)
		}
		if i >= len(summaries) {
			continue
		}
		summary := summaries[i]
		if h := summary[0]; strings.Join(h, "|") != strings.Join(summaryHeader, "|") {
			fail("summary header %q, want %q", h, summaryHeader)
		}
		if len(summary) != 2 {
			fail("summary table has %d rows, want 1", len(summary)-1)
			continue
		}
		s := pt.res.Summary
		want := []string{itoa(s.Defects), itoa(s.Caught), itoa(s.Escaped), itoa(s.Exact), itoa(s.TooWide), itoa(s.Extra), itoa(s.Different), itoa(s.Hung), itoa(s.Unexpected), string(pt.res.Gate)}
		if got := summary[1]; strings.Join(got, "|") != strings.Join(want, "|") {
			fail("summary row %q, the JSON says %q", got, want)
		}
	}
	if len(withDefects) == 0 {
		if len(defectTables) > 0 {
			fail("a per-defect table, but the JSON has no defects")
		}
		return errors.Join(errs...)
	}
	if len(defectTables) == 0 {
		return errors.Join(append(errs, errors.New("no per-defect table (one headed \"defect\")"))...)
	}
	if len(defectTables) != len(withDefects) {
		fail("%d per-defect tables, want %d (one per suite with defects)", len(defectTables), len(withDefects))
	}
	for i, pt := range withDefects {
		if i < len(defectTables) {
			if err := crossCheckDefectTable(pt.defects, defectTables[i]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// crossCheckDefectTable checks one per-defect table against the defects
// it should list.
func crossCheckDefectTable(ds []Defect, defects [][]string) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	col := indexOf(defects[0], "outcome")
	if col < 0 {
		return errors.New("the per-defect table has no outcome column")
	}
	outcome := map[string]string{}
	var order []string
	for _, row := range defects[1:] {
		if col < len(row) {
			outcome[row[0]] = row[col]
			order = append(order, row[0])
		}
	}
	var ids []string
	for _, d := range ds {
		ids = append(ids, d.ID)
		if got, ok := outcome[d.ID]; !ok {
			fail("defect %s is missing from the per-defect table", d.ID)
		} else if got != string(d.Outcome) {
			fail("defect %s: outcome %q, the JSON says %q", d.ID, got, d.Outcome)
		}
	}
	if strings.Join(order, ",") != strings.Join(ids, ",") {
		fail("per-defect rows %v, the JSON has %v", order, ids)
	}
	return errors.Join(errs...)
}

// parseTables returns the tables of a text or markdown rendering, each as
// rows of trimmed cells, the header first. A text table's border and rule
// lines and a markdown table's alignment row are left out. A text row
// that continues the cells of the row above (an empty first cell: the
// first column never wraps) is joined to it, each cell's lines by a
// space, as fitTable wrapped them at spaces; and a text table split into
// column blocks (the next box one blank line below, with the same first
// column) is read back as one table.
func parseTables(doc string, md bool) [][][]string {
	type parsed struct {
		rows       [][]string
		start, end int // the lines of its first and last rule or row
	}
	var tables []parsed
	var cur *parsed
	flush := func() {
		if cur != nil {
			tables = append(tables, *cur)
			cur = nil
		}
	}
	for n, line := range strings.Split(doc, "\n") {
		line = strings.TrimRight(line, " \r")
		var cells []string
		switch {
		case md && strings.HasPrefix(line, "|"):
			cells = splitMarkdownRow(line)
			if isAlignmentRow(cells) {
				continue
			}
		case !md && strings.HasPrefix(line, "│"):
			parts := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "│"), "│"), "│")
			for _, p := range parts {
				cells = append(cells, strings.TrimSpace(p))
			}
			if cur != nil && len(cur.rows) > 0 && len(cells) > 0 && cells[0] == "" {
				above := cur.rows[len(cur.rows)-1]
				for i := 1; i < len(cells) && i < len(above); i++ {
					if cells[i] != "" {
						above[i] = strings.TrimSpace(above[i] + " " + cells[i])
					}
				}
				cur.end = n
				continue
			}
		case !md && strings.HasPrefix(line, "┌"):
			flush()
			cur = &parsed{start: n, end: n}
			continue
		case !md && strings.HasPrefix(line, "├"):
			continue
		case !md && strings.HasPrefix(line, "└"):
			if cur != nil {
				cur.end = n
			}
			flush()
			continue
		default:
			flush()
			continue
		}
		if cur == nil {
			cur = &parsed{start: n}
		}
		cur.rows, cur.end = append(cur.rows, cells), n
	}
	flush()
	var out [][][]string
	for i, t := range tables {
		if i > 0 && !md && t.start == tables[i-1].end+2 && len(out) > 0 && sameFirstColumn(out[len(out)-1], t.rows) {
			prev := out[len(out)-1]
			for r := range prev {
				prev[r] = append(prev[r], t.rows[r][1:]...)
			}
			continue
		}
		out = append(out, t.rows)
	}
	return out
}

// sameFirstColumn reports whether two tables have the same first column:
// one is the other's next block.
func sameFirstColumn(a, b [][]string) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for i := range a {
		if len(a[i]) == 0 || len(b[i]) == 0 || a[i][0] != b[i][0] {
			return false
		}
	}
	return true
}

// splitMarkdownRow splits "| a | b \| c |" into ["a", "b | c"].
func splitMarkdownRow(line string) []string {
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var cells []string
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			b.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(b.String()))
}

func isAlignmentRow(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, ":-") != "" || !strings.Contains(c, "-") {
			return false
		}
	}
	return len(cells) > 0
}

// findTable returns the first table whose first header cell is first.
func findTable(tables [][][]string, first string) [][]string {
	if ts := findTables(tables, first); len(ts) > 0 {
		return ts[0]
	}
	return nil
}

// findTables returns every table whose first header cell is first, in
// order.
func findTables(tables [][][]string, first string) [][][]string {
	var out [][][]string
	for _, t := range tables {
		if len(t) > 0 && len(t[0]) > 0 && t[0][0] == first {
			out = append(out, t)
		}
	}
	return out
}

func indexOf(cells []string, s string) int {
	for i, c := range cells {
		if c == s {
			return i
		}
	}
	return -1
}
