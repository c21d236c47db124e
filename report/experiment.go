package report

import (
	"io"
	"strconv"
	"strings"
)

// Experiment is the report of one experiment of the course notes: a few
// measured cases and what they show.
type Experiment struct {
	// ID names the experiment on the command line (cpu-quirk, nproc, layer-hiding).
	ID string `json:"id"`
	// Title says what it asks.
	Title string `json:"title"`
	// Identity says who measured it.
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
	// Unit names what Value counts ("s CPU", "survivors").
	Unit string `json:"unit"`
}

// Tables renders the experiment as its title, one table of figures and
// its finding.
func (e *Experiment) Tables(w io.Writer, md bool) error {
	p := newPrinter(w, md)
	e.tables(p)
	return p.err
}

func (e *Experiment) tables(p *printer) {
	p.subheading(e.Title)
	rows := make([][]string, len(e.Rows))
	for i, r := range e.Rows {
		rows[i] = []string{r.Case, r.Outcome, r.measured()}
	}
	p.table([]string{"case", "outcome", "measured"}, rows)
	p.printf("%s\n%sMeasured with %s.\n", e.Finding, para(p.md), e.Identity.who())
}

// measured is the row's figure with its unit.
func (r ExperimentRow) measured() string {
	return strings.TrimSpace(strconv.FormatFloat(r.Value, 'f', -1, 64) + " " + r.Unit)
}

// Experiments is several experiments in one report.
type Experiments []*Experiment

// Tables renders each experiment in turn.
func (es Experiments) Tables(w io.Writer, md bool) error {
	p := newPrinter(w, md)
	for i, e := range es {
		if i > 0 {
			p.printf("\n")
		}
		e.tables(p)
	}
	return p.err
}
