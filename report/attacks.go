package report

import (
	"fmt"
	"io"
	"strconv"
)

// Tables renders the attack matrix: one row per attack, one column per
// level ("escaped" or "stopped (mechanism)"), the first level that stops
// each attack, and a line saying who ran it.
func (a *Attacks) Tables(w io.Writer, md bool) error {
	header := []string{"attack"}
	for _, l := range a.Levels {
		header = append(header, "L"+strconv.Itoa(l))
	}
	header = append(header, "first stop")
	rows := make([][]string, 0, len(a.Attacks))
	for _, at := range a.Attacks {
		row := []string{at}
		for _, l := range a.Levels {
			c, ok := a.Cell(at, l)
			switch {
			case !ok:
				row = append(row, "not run")
			case c.Escaped:
				row = append(row, "escaped")
			default:
				row = append(row, "stopped ("+c.StoppedBy+")")
			}
		}
		first := "never"
		if l, ok := a.FirstStopped[at]; ok && l >= 0 {
			first = "L" + strconv.Itoa(l)
		}
		rows = append(rows, append(row, first))
	}
	if err := table(w, md, header, rows); err != nil {
		return err
	}
	sep := "\n"
	if md {
		sep = "\n\n"
	}
	defect := ""
	if a.Defect != "" {
		defect = " with defect " + a.Defect
	}
	who := fmt.Sprintf("harness uid %d", a.Identity.UID)
	if a.Identity.Root {
		who += " (root)"
	}
	_, err := fmt.Fprintf(w, "%s%d of %d cells escaped%s (%s, programs ran as host uid %d)\n",
		sep, len(a.Escaped()), len(a.Cells), defect, who, a.Identity.ProgramUID)
	return err
}
