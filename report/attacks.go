package report

import (
	"fmt"
	"io"
	"strconv"

	"sandboxlab/verdict"
)

// Tables renders the attack matrix: one row per attack, one column per
// level ("escaped" or the mechanism that stopped it), the first level that stops
// each attack and, when known, the level expected to; then a line saying
// who ran it and the evidence of every unexpected escape. Each suite has
// a matrix of its own, at the levels it has: the course's first, then
// each other suite's under its name.
func (a *Attacks) Tables(w io.Writer, md bool) error {
	p := newPrinter(w, md)
	suites := a.suites()
	if len(suites) == 0 {
		suites = []verdict.Suite{verdict.Course}
	}
	for i, s := range suites {
		if i > 0 {
			p.printf("\n")
		}
		if !isCourse(s) {
			p.heading(suiteWord(s) + " suite")
		}
		a.InSuite(s).matrix(p)
	}
	return p.err
}

// matrix writes the matrix and its notes (also the baseline part of the
// mutation report).
func (a *Attacks) matrix(p *printer) {
	expected := len(a.Expected) > 0
	header := []string{"attack"}
	for _, l := range a.Levels {
		header = append(header, "L"+strconv.Itoa(l))
	}
	header = append(header, "first stop")
	if expected {
		header = append(header, "expected")
	}
	rows := make([][]string, 0, len(a.Attacks))
	for _, at := range a.Attacks {
		row := []string{at}
		for _, l := range a.Levels {
			c, ok := a.Cell(at, l)
			switch {
			case !ok:
				row = append(row, verdict.CellNotRun)
			case c.NA != "":
				row = append(row, verdict.CellNA)
			case a.UnexpectedEscape(c):
				row = append(row, verdict.CellUnexpected)
			case c.Escaped:
				row = append(row, verdict.CellEscaped)
			default:
				row = append(row, c.StoppedBy)
			}
		}
		first := verdict.NeverStopped
		if l, ok := a.FirstStopped[at]; ok && l >= 0 {
			first = "L" + strconv.Itoa(l)
		}
		if _, na := a.NotApplicable[at]; na {
			first = verdict.CellNA
		}
		row = append(row, first)
		if expected {
			want := "-"
			if l, ok := a.Expected[at]; ok {
				want = "L" + strconv.Itoa(l)
			}
			row = append(row, want)
		}
		rows = append(rows, row)
	}
	p.table(header, rows)
	defect := ""
	if a.Defect != "" {
		defect = " with defect " + a.Defect
	}
	bad := a.UnexpectedEscapes()
	legend, unexpected := "", ""
	if expected {
		legend = "; ESCAPED marks an escape at or above the level expected to stop the attack"
		unexpected = fmt.Sprintf(", %d of them unexpected", len(bad))
	}
	p.printf("A cell names what stopped the attack at that level, or says escaped%s.\n", legend)
	p.printf("%d of %d cells escaped%s%s (%s).\n", len(a.Escaped()), len(a.Cells), defect, unexpected, a.Identity.who())
	for _, at := range a.Attacks {
		if why, ok := a.NotApplicable[at]; ok {
			p.printf("%s is n/a on this host: %s.\n", at, why)
		}
	}
	if len(bad) > 0 {
		p.printf("\nUnexpected escapes:\n%s", para(p.md))
		for _, c := range bad {
			p.printf("- %s: %s\n", c.Name(), c.Evidence)
		}
	}
}

// para separates paragraphs: a blank line in markdown, where a single
// newline would join them, and nothing in text.
func para(md bool) string {
	if md {
		return "\n"
	}
	return ""
}
