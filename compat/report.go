package compat

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"sandboxlab/report"
)

// Result is one workload at one level.
type Result struct {
	Workload string `json:"workload"`
	Level    int    `json:"level"`
	Passed   bool   `json:"passed"`
	// Skipped says why the workload did not run ("" when it ran).
	Skipped string `json:"skipped,omitempty"`
	// Reason and ExitCode are how the run ended ("error" when the
	// sandbox could not run it).
	Reason   string `json:"reason,omitempty"`
	ExitCode int    `json:"exit_code"`
	// Detail says why it failed.
	Detail string `json:"detail,omitempty"`
	MS     int64  `json:"ms"`
}

// Report is the suite's outcome: every workload at every level.
type Report struct {
	Levels    []int      `json:"levels"`
	Workloads []Workload `json:"workloads"`
	// Results are workload-major within each level: level i's results
	// are Results[i*len(Workloads):(i+1)*len(Workloads)].
	Results []Result `json:"results"`
	Passed  int      `json:"passed"`
	Failed  int      `json:"failed"`
	Skipped int      `json:"skipped"`
}

var _ report.Report = (*Report)(nil)

func (r *Report) tally() {
	r.Passed, r.Failed, r.Skipped = 0, 0, 0
	for _, res := range r.Results {
		switch {
		case res.Skipped != "":
			r.Skipped++
		case res.Passed:
			r.Passed++
		default:
			r.Failed++
		}
	}
}

// result returns workload i's result at level index l.
func (r *Report) result(i, l int) Result { return r.Results[l*len(r.Workloads)+i] }

// cell is a result as the table shows it.
func (res Result) cell() string {
	switch {
	case res.Skipped != "":
		return "skipped: " + res.Skipped
	case res.Passed:
		return "ok"
	}
	return "FAILED: " + res.Detail
}

// Tables writes one row per workload, a column per level, and the count.
func (r *Report) Tables(w io.Writer, md bool) error {
	header := []string{"workload", "what"}
	for _, l := range r.Levels {
		header = append(header, "L"+strconv.Itoa(l))
	}
	var rows [][]string
	for i, wl := range r.Workloads {
		row := []string{wl.Name, wl.What}
		for l := range r.Levels {
			row = append(row, r.result(i, l).cell())
		}
		rows = append(rows, row)
	}
	opts := []tablewriter.Option{tablewriter.WithHeaderAutoFormat(tw.Off)}
	if md {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	t := tablewriter.NewTable(w, opts...)
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	if err := t.Render(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s\n", r.Summary())
	return err
}

// Summary says in one line how the suite went.
func (r *Report) Summary() string {
	levels := make([]string, len(r.Levels))
	for i, l := range r.Levels {
		levels[i] = "L" + strconv.Itoa(l)
	}
	s := fmt.Sprintf("%d workloads at %s: %d runs passed, %d failed, %d skipped.",
		len(r.Workloads), strings.Join(levels, " and "), r.Passed, r.Failed, r.Skipped)
	if r.Failed == 0 {
		s += " Nothing ordinary broke."
	}
	return s
}

// JUnit gives a test suite per level and a test case per workload: a
// failed run fails, a workload whose program is missing is skipped.
func (r *Report) JUnit() *report.TestSuites {
	out := &report.TestSuites{Name: "sandboxlab compat"}
	var total int64
	for l, level := range r.Levels {
		suite := report.TestSuite{Name: "compat.L" + strconv.Itoa(level)}
		var ms int64
		for i, wl := range r.Workloads {
			res := r.result(i, l)
			tc := report.TestCase{Name: wl.Name, ClassName: suite.Name, Time: seconds(res.MS), SystemOut: wl.What + "\n"}
			switch {
			case res.Skipped != "":
				tc.Skipped = &report.Skipped{Message: res.Skipped}
				suite.Skipped++
			case !res.Passed:
				tc.Failure = &report.Problem{Message: res.Detail, Type: "workload failed", Text: res.Detail + "\n"}
				suite.Failures++
			}
			ms += res.MS
			suite.Cases = append(suite.Cases, tc)
		}
		suite.Tests, suite.Time = len(suite.Cases), seconds(ms)
		out.Tests, out.Failures, out.Skipped = out.Tests+suite.Tests, out.Failures+suite.Failures, out.Skipped+suite.Skipped
		total += ms
		out.Suites = append(out.Suites, suite)
	}
	out.Time = seconds(total)
	return out
}

func seconds(ms int64) string { return strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64) }
