package report

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CrossCheck reads the mutation report that --out wrote into dir
// (mutate.json, mutate.txt, mutate.md, mutate.junit.xml) and checks that
// the four files carry the same facts: the same defects with the same
// outcomes, the same summary counts and gate, and JUnit counts that match
// the summary. It returns every disagreement it finds, joined.
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

	// The JSON agrees with itself: its summary is its defects' tally.
	tallied := m // a copy: Tally only sets its Summary
	tallied.Tally()
	if tallied.Summary != m.Summary {
		fail("mutate.json: summary %+v, but its defects tally to %+v", m.Summary, tallied.Summary)
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
	return errors.Join(errs...)
}

// crossCheckJUnit checks the JUnit file against the model: one case for
// the baseline and one per defect, each with the status DefectStatus
// gives, and counts that add up and match the summary.
func crossCheckJUnit(m *Mutation, data []byte) error {
	var s TestSuites
	if err := xml.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("not valid XML: %w", err)
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(s.Suites) != 1 {
		return fmt.Errorf("want 1 testsuite, found %d", len(s.Suites))
	}
	suite := s.Suites[0]
	status := map[string]string{}
	counts := map[string]int{}
	for _, c := range suite.Cases {
		if _, dup := status[c.Name]; dup {
			fail("testcase %s appears twice", c.Name)
		}
		status[c.Name] = c.Status()
		counts[c.Status()]++
	}
	if got, want := len(suite.Cases), len(m.Defects)+1; got != want {
		fail("%d testcases, want %d (the baseline and %d defects)", got, want, len(m.Defects))
	}
	if suite.Tests != len(suite.Cases) || suite.Failures != counts[StatusFailed] || suite.Errors != counts[StatusError] || suite.Skipped != counts[StatusSkipped] {
		fail("testsuite says tests=%d failures=%d errors=%d skipped=%d, its testcases count %d, %d, %d, %d",
			suite.Tests, suite.Failures, suite.Errors, suite.Skipped, len(suite.Cases), counts[StatusFailed], counts[StatusError], counts[StatusSkipped])
	}
	if s.Tests != suite.Tests || s.Failures != suite.Failures || s.Errors != suite.Errors || s.Skipped != suite.Skipped {
		fail("testsuites counts differ from its one testsuite's")
	}
	wantBase := yesNo(m.Baseline.OK, StatusPassed, StatusFailed)
	if got, ok := status["baseline"]; !ok {
		fail("no testcase for the baseline")
	} else if got != wantBase {
		fail("baseline testcase is %s, the JSON says the baseline is %s", got, yesNo(m.Baseline.OK, "ok", "broken"))
	}
	for _, d := range m.Defects {
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
	if !m.Baseline.OK {
		brokenBase = 1
	}
	if got, want := counts[StatusFailed]+counts[StatusError], m.Summary.Unexpected+brokenBase; got != want {
		fail("%d failures and errors, the summary has %d defects with unexpected results", got, m.Summary.Unexpected)
	}
	if got, want := counts[StatusError], m.Summary.Hung; got != want {
		fail("%d errors, the summary has %d hung or failed runs", got, want)
	}
	return errors.Join(errs...)
}

// crossCheckTables finds the summary table and the per-defect table in a
// text or markdown rendering and checks them against the model.
func crossCheckTables(m *Mutation, doc string, md bool) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	tables := parseTables(doc, md)
	summary, defects := findTable(tables, "defects"), findTable(tables, "defect")
	if summary == nil {
		return errors.New("no summary table (one headed \"defects\")")
	}
	if h := summary[0]; strings.Join(h, "|") != strings.Join(summaryHeader, "|") {
		fail("summary header %q, want %q", h, summaryHeader)
	}
	if len(summary) != 2 {
		fail("summary table has %d rows, want 1", len(summary)-1)
	} else {
		s := m.Summary
		want := []string{itoa(s.Defects), itoa(s.Caught), itoa(s.Escaped), itoa(s.Exact), itoa(s.TooWide), itoa(s.Extra), itoa(s.Different), itoa(s.Hung), itoa(s.Unexpected), string(m.Gate)}
		if got := summary[1]; strings.Join(got, "|") != strings.Join(want, "|") {
			fail("summary row %q, the JSON says %q", got, want)
		}
	}
	if len(m.Defects) == 0 {
		if defects != nil {
			fail("a per-defect table, but the JSON has no defects")
		}
		return errors.Join(errs...)
	}
	if defects == nil {
		return errors.Join(append(errs, errors.New("no per-defect table (one headed \"defect\")"))...)
	}
	col := indexOf(defects[0], "outcome")
	if col < 0 {
		return errors.Join(append(errs, errors.New("the per-defect table has no outcome column"))...)
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
	for _, d := range m.Defects {
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
// lines and a markdown table's alignment row are left out, and so is a
// text row that only continues the cells of the row above (an empty first
// cell).
func parseTables(doc string, md bool) [][][]string {
	var tables [][][]string
	var cur [][]string
	flush := func() {
		if cur != nil {
			tables = append(tables, cur)
			cur = nil
		}
	}
	for _, line := range strings.Split(doc, "\n") {
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
			if cur != nil && len(cells) > 0 && cells[0] == "" {
				continue
			}
		case !md && (strings.HasPrefix(line, "┌") || strings.HasPrefix(line, "├")):
			continue
		case !md && strings.HasPrefix(line, "└"):
			flush()
			continue
		default:
			flush()
			continue
		}
		cur = append(cur, cells)
	}
	flush()
	return tables
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
	for _, t := range tables {
		if len(t) > 0 && len(t[0]) > 0 && t[0][0] == first {
			return t
		}
	}
	return nil
}

func indexOf(cells []string, s string) int {
	for i, c := range cells {
		if c == s {
			return i
		}
	}
	return -1
}
