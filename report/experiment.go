package report

import (
	"fmt"
	"io"
	"strconv"
)

// Experiment is the report of one experiment of the course notes: a few
// measured cases and what they show.
type Experiment struct {
	// ID names the experiment on the command line (cpu-quirk, nproc, layer-hiding).
	ID string `json:"id"`
	// Title says what it asks.
	Title    string   `json:"title"`
	Identity Identity `json:"identity"`
	// Rows are the measured cases.
	Rows []ExperimentRow `json:"rows"`
	// Finding sums the figures up in one sentence.
	Finding string `json:"finding"`
}

// ExperimentRow is one measured case.
type ExperimentRow struct {
	// Case describes the set-up.
	Case string `json:"case"`
	// Outcome says how the run ended, as the host saw it.
	Outcome string `json:"outcome"`
	// Value is the figure measured, in Unit.
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// Tables renders the experiment as one table and its finding.
func (e *Experiment) Tables(w io.Writer, md bool) error {
	if md {
		fmt.Fprintf(w, "### %s\n\n", e.Title)
	} else {
		fmt.Fprintf(w, "%s\n", e.Title)
	}
	rows := make([][]string, len(e.Rows))
	for i, r := range e.Rows {
		rows[i] = []string{r.Case, r.Outcome, strconv.FormatFloat(r.Value, 'f', -1, 64) + " " + r.Unit}
	}
	if err := table(w, md, []string{"case", "outcome", "measured"}, rows); err != nil {
		return err
	}
	sep := "\n"
	if md {
		sep = "\n\n"
	}
	_, err := fmt.Fprintf(w, "%s%s (harness uid %d, program uid %d)\n", sep, e.Finding, e.Identity.UID, e.Identity.ProgramUID)
	return err
}

// Experiments is several experiments in one report.
type Experiments []*Experiment

// Tables renders each experiment in turn.
func (es Experiments) Tables(w io.Writer, md bool) error {
	for i, e := range es {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := e.Tables(w, md); err != nil {
			return err
		}
	}
	return nil
}
