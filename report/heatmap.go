package report

import (
	"fmt"
	"strconv"
	"strings"

	"sandboxlab/verdict"
)

// A heat map is a matrix of attacks against columns (levels, or other
// sandboxes), each cell coloured by what happened to the attack there.
// The page draws any HeatMap; an adapter builds one from a result model
// (AttackHeatMap from the attack × level matrix).

// CellState is what a heat-map cell shows, and its colour.
type CellState string

const (
	// Stopped: something stopped the attack; the cell names it.
	Stopped CellState = verdict.CellStopped
	// Escaped: the attack got through where that is expected (below the
	// level expected to stop it, or with nothing to judge against).
	Escaped CellState = verdict.CellEscaped
	// UnexpectedEscape: the attack got through at or above the level
	// expected to stop it.
	UnexpectedEscape CellState = "unexpected"
	// NotApplicable: the attack cannot be judged in this column (it needs
	// what the column lacks); never counted as stopped.
	NotApplicable CellState = "n/a"
	// NotRun: the cell was not part of the run.
	NotRun CellState = verdict.CellNotRun
)

// HeatMap is the view model of one matrix.
type HeatMap struct {
	// Title heads the map.
	Title string
	// Corner heads the row labels ("attack").
	Corner string
	// Columns head the cells' columns ("L0", …, or sandbox names).
	Columns []string
	// Trailing head the columns after the cells ("first stop", …).
	Trailing []string
	// Rows are the matrix's rows, in order.
	Rows []HeatRow
	// Note says how to read it, in a sentence or two.
	Note string
}

// HeatRow is one attack's row.
type HeatRow struct {
	// Label names the row (the attack's id).
	Label string
	// Cells are the row's cells, one per column.
	Cells []HeatCell
	// Trailing are the row's values under HeatMap.Trailing.
	Trailing []string
}

// HeatCell is one attack in one column.
type HeatCell struct {
	// ID is the cell's id (attack@L<n>, attack@<column>).
	ID string
	// State colours it.
	State CellState
	// Text is what the cell says: the mechanism that stopped the attack,
	// escaped or ESCAPED, n/a, not run.
	Text string
	// Tooltip gives the mechanism and the evidence, on a few lines.
	Tooltip string
	// Marks counts what the cell is marked by (in a mutation report, the
	// defects that let the attack through there); 0 for none.
	Marks int
}

// Cells returns the number of cells the map has.
func (h HeatMap) Cells() int {
	n := 0
	for _, r := range h.Rows {
		n += len(r.Cells)
	}
	return n
}

// AttackHeatMap builds the heat map of one suite's attack × level
// matrix (a as InSuite returns it). openedBy, when not nil, maps a cell's
// name to the defects that let the attack through there although the
// correct sandbox stops it (a mutation report's attack escapes): the
// cell's tooltip names them and its mark counts them.
func AttackHeatMap(a *Attacks, title string, openedBy map[string][]string) HeatMap {
	h := HeatMap{Title: title, Corner: "attack", Trailing: []string{"first stop"}}
	expected := len(a.Expected) > 0
	if expected {
		h.Trailing = append(h.Trailing, "expected")
	}
	for _, l := range a.Levels {
		h.Columns = append(h.Columns, verdict.LevelColumn(l))
	}
	for _, at := range a.Attacks {
		row := HeatRow{Label: at}
		for _, l := range a.Levels {
			name := verdict.AtLevel(at, l).String()
			c, ok := a.Cell(at, l)
			cell := HeatCell{ID: name}
			switch {
			case !ok:
				cell.State, cell.Text = NotRun, verdict.CellNotRun
				cell.Tooltip = name + ": not run"
			case c.NA != "":
				cell.State, cell.Text = NotApplicable, verdict.CellNA
				cell.Tooltip = name + ": not applicable on this host: " + c.NA
			default:
				cell.State, cell.Text = Stopped, c.StoppedBy
				what := "stopped by " + c.StoppedBy
				switch {
				case a.UnexpectedEscape(c):
					cell.State, cell.Text = UnexpectedEscape, verdict.CellUnexpected
					what = fmt.Sprintf("ESCAPED at or above L%d, the level expected to stop it", a.Expected[at])
				case c.Escaped:
					cell.State, cell.Text = Escaped, verdict.CellEscaped
					what = verdict.CellEscaped
				}
				cell.Tooltip = fmt.Sprintf("%s: %s\nevidence: %s\n%d ms", name, what, c.Evidence, c.MS)
			}
			if ds := openedBy[name]; len(ds) > 0 {
				cell.Marks = len(ds)
				cell.Tooltip += "\nlet through by the defect" + yesNo(len(ds) == 1, "", "s") + " " + strings.Join(ds, ", ")
			}
			row.Cells = append(row.Cells, cell)
		}
		first := verdict.NeverStopped
		if l, ok := a.FirstStopped[at]; ok && l >= 0 {
			first = "L" + strconv.Itoa(l)
		}
		if _, na := a.NotApplicable[at]; na {
			first = verdict.CellNA
		}
		row.Trailing = append(row.Trailing, first)
		if expected {
			want := "-"
			if l, ok := a.Expected[at]; ok {
				want = "L" + strconv.Itoa(l)
			}
			row.Trailing = append(row.Trailing, want)
		}
		h.Rows = append(h.Rows, row)
	}
	bad := len(a.UnexpectedEscapes())
	h.Note = fmt.Sprintf("%d of %d cells escaped", len(a.Escaped()), len(a.Cells))
	if expected {
		h.Note += fmt.Sprintf(", %d of them unexpected", bad)
	}
	if a.Defect != "" {
		h.Note += ", with defect " + a.Defect
	}
	h.Note += " (" + a.Identity.who() + ")."
	if openedBy != nil {
		h.Note += " A number in a cell counts the planted defects that let the attack through there."
	}
	return h
}

// SandboxHeatMap builds the heat map of the attack × sandbox matrix: a
// column per sandbox, each cell coloured stopped, escaped or n/a, its
// tooltip the mechanism and the evidence. A column that did not run is
// not run throughout, its reason in every tooltip.
func SandboxHeatMap(s *Sandboxes, title string) HeatMap {
	h := HeatMap{Title: title, Corner: "attack"}
	for _, sb := range s.Sandboxes {
		h.Columns = append(h.Columns, sb.Name)
	}
	for _, at := range s.Attacks {
		row := HeatRow{Label: at}
		for _, sb := range s.Sandboxes {
			c, ok := s.Cell(at, sb.Name)
			cell := HeatCell{ID: verdict.Cell{Attack: at, Column: sb.Name}.String()}
			switch {
			case sb.Skipped != "":
				cell.State, cell.Text = NotRun, verdict.CellNotRun
				cell.Tooltip = fmt.Sprintf("%s: not run: %s", cell.ID, sb.Skipped)
			case !ok:
				cell.State, cell.Text = NotRun, verdict.CellNotRun
				cell.Tooltip = cell.ID + ": not run"
			default:
				cell.State, cell.Text = c.State, string(c.State)
				if c.State == Stopped && c.Mechanism != "" {
					cell.Text = c.Mechanism
				}
				cell.Tooltip = fmt.Sprintf("%s: %s\nevidence: %s\n%d ms", cell.ID, cell.Text, c.Evidence, c.MS)
			}
			row.Cells = append(row.Cells, cell)
		}
		h.Rows = append(h.Rows, row)
	}
	return h
}
