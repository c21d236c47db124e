package reporttest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"sandboxlab/report"
)

// summaryHeader is the header of a mutation report's summary table, by
// which a reader finds the table and each figure's column.
var summaryHeader = []string{"defects", "caught", "escaped", "exact", "too wide", "extra", "different", "hung", "unexpected", "gate"}

// crossCheckTables finds each suite's summary table and per-defect table
// in a text or markdown rendering, in order, and checks them against the
// model.
func crossCheckTables(m *report.Mutation, doc string, md bool) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	tables := Tables(doc, md)
	summaries, defectTables := findTables(tables, "defects"), findTables(tables, "defect")
	parts := parts(m)
	if len(summaries) == 0 {
		return errors.New("no summary table (one headed \"defects\")")
	}
	if len(summaries) != len(parts) {
		fail("%d summary tables, want %d (one per suite of the run)", len(summaries), len(parts))
	}
	var withDefects []part
	for i, pt := range parts {
		if len(pt.defects) > 0 {
			withDefects = append(withDefects, pt)
		}
		if i < len(summaries) {
			if err := crossCheckSummary(pt.res, summaries[i]); err != nil {
				errs = append(errs, err)
			}
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

// crossCheckSummary checks one suite's summary table against its result.
func crossCheckSummary(res report.SuiteResult, summary [][]string) error {
	var errs []error
	if h := summary[0]; strings.Join(h, "|") != strings.Join(summaryHeader, "|") {
		errs = append(errs, fmt.Errorf("summary header %q, want %q", h, summaryHeader))
	}
	if len(summary) != 2 {
		return errors.Join(append(errs, fmt.Errorf("summary table has %d rows, want 1", len(summary)-1))...)
	}
	s, itoa := res.Summary, strconv.Itoa
	want := []string{itoa(s.Defects), itoa(s.Caught), itoa(s.Escaped), itoa(s.Exact), itoa(s.TooWide), itoa(s.Extra), itoa(s.Different), itoa(s.Hung), itoa(s.Unexpected), string(res.Gate)}
	if got := summary[1]; strings.Join(got, "|") != strings.Join(want, "|") {
		errs = append(errs, fmt.Errorf("summary row %q, the JSON says %q", got, want))
	}
	return errors.Join(errs...)
}

// crossCheckDefectTable checks one per-defect table against the defects
// it should list.
func crossCheckDefectTable(ds []report.Defect, defects [][]string) error {
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

// Tables returns the tables of a text or markdown rendering, each as rows
// of trimmed cells, the header first. A text table's border and rule
// lines and a markdown table's alignment row are left out. A text row
// that continues the cells of the row above (an empty first cell: the
// first column never wraps) is joined to it, each cell's lines by a
// space, as the renderer wrapped them at spaces; and a text table split
// into column blocks (the next box one blank line below, with the same
// first column) is read back as one table.
func Tables(doc string, md bool) [][][]string {
	lines := strings.Split(doc, "\n")
	for i, line := range lines {
		lines[i] = strings.TrimRight(line, " \r")
	}
	if md {
		var out [][][]string
		for _, b := range markdownBoxes(lines) {
			out = append(out, b.rows)
		}
		return out
	}
	return joinBlocks(textBoxes(lines))
}

// FindTable returns the first of tables whose first header cell is
// first, or nil.
func FindTable(tables [][][]string, first string) [][]string {
	if ts := findTables(tables, first); len(ts) > 0 {
		return ts[0]
	}
	return nil
}

// box is one table as a rendering draws it: its rows, and the lines of
// its first and last rule or row.
type box struct {
	rows       [][]string
	start, end int
}

// markdownBoxes returns the runs of table rows of a markdown rendering.
func markdownBoxes(lines []string) []box {
	var out []box
	open := false
	for n, line := range lines {
		if !strings.HasPrefix(line, "|") {
			open = false
			continue
		}
		cells := splitMarkdownRow(line)
		if isAlignmentRow(cells) {
			continue
		}
		if !open {
			out, open = append(out, box{start: n}), true
		}
		b := &out[len(out)-1]
		b.rows, b.end = append(b.rows, cells), n
	}
	return out
}

// textBoxes returns the boxes of a text rendering, a wrapped row's
// continuation lines joined to it.
func textBoxes(lines []string) []box {
	var out []box
	open := false
	for n, line := range lines {
		switch {
		case strings.HasPrefix(line, "┌"):
			out, open = append(out, box{start: n, end: n}), true
		case strings.HasPrefix(line, "├"):
		case strings.HasPrefix(line, "└"):
			if open {
				out[len(out)-1].end = n
			}
			open = false
		case strings.HasPrefix(line, "│"):
			if !open {
				out, open = append(out, box{start: n}), true
			}
			b := &out[len(out)-1]
			cells := textRow(line)
			if len(b.rows) > 0 && len(cells) > 0 && cells[0] == "" {
				above := b.rows[len(b.rows)-1]
				for i := 1; i < len(cells) && i < len(above); i++ {
					if cells[i] != "" {
						above[i] = strings.TrimSpace(above[i] + " " + cells[i])
					}
				}
			} else {
				b.rows = append(b.rows, cells)
			}
			b.end = n
		default:
			open = false
		}
	}
	return out
}

// textRow splits "│ a │ b │" into ["a", "b"].
func textRow(line string) []string {
	var cells []string
	for _, c := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "│"), "│"), "│") {
		cells = append(cells, strings.TrimSpace(c))
	}
	return cells
}

// joinBlocks reads a table split into column blocks back as one: a box
// one blank line below the one before, with the same first column, adds
// its other columns to it.
func joinBlocks(boxes []box) [][][]string {
	var out [][][]string
	for i, b := range boxes {
		if i > 0 && b.start == boxes[i-1].end+2 && len(out) > 0 && sameFirstColumn(out[len(out)-1], b.rows) {
			prev := out[len(out)-1]
			for r := range prev {
				prev[r] = append(prev[r], b.rows[r][1:]...)
			}
			continue
		}
		out = append(out, b.rows)
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
