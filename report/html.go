package report

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"

	"sandboxlab/verdict"
)

// The HTML page: one self-contained file (html/template, the template
// and the component embedded; no request leaves the page, which its
// Content-Security-Policy enforces), with the same facts as the tables.

//go:embed templates/page.html.tmpl
var templates embed.FS

// pageTemplate parses the template when a page is first drawn, not at
// start-up: this binary is also the sandbox's init, which draws none.
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page.html.tmpl").ParseFS(templates, "templates/page.html.tmpl"))
})

// page is what the template draws.
type page struct {
	// Title is the page's title: "sandboxlab mutate".
	Title string
	// Lead is the first sentence a reader sees: the gate, or the count of
	// checks passed or cells escaped.
	Lead string
	// LeadBad colours Lead as a failure.
	LeadBad bool
	// Who says who ran the report.
	Who string
	// Parts are the suites' parts, the course's first.
	Parts []pagePart
	// Stryker is the mutation report for the component (nil: none).
	Stryker *StrykerReport
	// ElementsJS is the component's bundle, inlined when Stryker is set.
	ElementsJS template.JS
	// ElementsVersion and License name and license the bundle.
	ElementsVersion string
	License         string
}

// pagePart is one suite's share of a page.
type pagePart struct {
	Heading  string
	Problems []string
	// Summary is a mutation part's counts (nil elsewhere).
	Summary *summaryView
	Bullets []string
	Defects []defectRow
	// Baseline is the sentence on the baseline's checks ("" for none).
	Baseline string
	Checks   []checkRow
	HeatMap  *HeatMap
}

// summaryView is the summary table's header and one row.
type summaryView struct {
	Header []string
	Row    []string
	Gate   string
}

// defectRow is one row of the per-defect table.
type defectRow struct {
	ID, Summary, Predicted, Failed, Outcome, PredictedAttacks, Attacks, Why, Status string
	Unexpected                                                                      bool
}

// checkRow is one check.
type checkRow struct {
	ID, Promise, Level, Evidence string
	Passed                       bool
	MS                           int64
}

// write renders the page.
func (p *page) write(w io.Writer) error {
	if strings.Contains(strings.ToLower(string(p.ElementsJS)), "</script") {
		return fmt.Errorf("the component's bundle contains </script, which would end its inline script")
	}
	if err := pageTemplate().Execute(w, p); err != nil {
		return fmt.Errorf("rendering the page: %w", err)
	}
	return nil
}

// checkRows lists checks for the page.
func checkRows(c *Checks) []checkRow {
	rows := make([]checkRow, 0, len(c.Checks))
	for _, ch := range c.Checks {
		rows = append(rows, checkRow{ID: ch.ID, Promise: ch.Promise, Level: fmt.Sprintf("L%d", ch.Level), Evidence: ch.Evidence, Passed: ch.Passed, MS: ch.MS})
	}
	return rows
}

// page draws the checks: a table per suite.
func (c *Checks) page(Options) (*page, error) {
	p := &page{Title: "sandboxlab check", Who: c.Identity.who(), LeadBad: c.Failed > 0}
	p.Lead = fmt.Sprintf("%d passed, %d failed", c.Passed, c.Failed)
	if c.Defect != "" {
		p.Lead += " with defect " + c.Defect
	}
	p.Lead += "."
	suites := c.suites()
	if len(suites) == 0 {
		suites = []verdict.Suite{verdict.Course}
	}
	for _, s := range suites {
		in := c.InSuite(s)
		p.Parts = append(p.Parts, pagePart{Heading: partHeading(s, "Checks", "suite"),
			Baseline: fmt.Sprintf("%d passed, %d failed.", in.Passed, in.Failed), Checks: checkRows(in)})
	}
	return p, nil
}

// page draws the attack matrix: a heat map per suite.
func (a *Attacks) page(Options) (*page, error) {
	bad := len(a.UnexpectedEscapes())
	p := &page{Title: "sandboxlab attack", Who: a.Identity.who(), LeadBad: bad > 0}
	p.Lead = fmt.Sprintf("%d of %d cells escaped", len(a.Escaped()), len(a.Cells))
	if len(a.Expected) > 0 {
		p.Lead += fmt.Sprintf(", %d of them unexpected", bad)
	}
	if a.Defect != "" {
		p.Lead += ", with defect " + a.Defect
	}
	p.Lead += "."
	suites := a.suites()
	if len(suites) == 0 {
		suites = []verdict.Suite{verdict.Course}
	}
	for _, s := range suites {
		h := AttackHeatMap(a.InSuite(s), "Attack × level", nil)
		p.Parts = append(p.Parts, pagePart{Heading: partHeading(s, "Attack matrix", "suite"), HeatMap: &h})
	}
	return p, nil
}

// page draws the mutation run: per suite its summary, the baseline's
// heat map (each cell saying which defects let the attack through) and
// the per-defect table; then the mutation-testing-elements component on
// the Stryker report.
func (m *Mutation) page(o Options) (*page, error) {
	parts := m.parts()
	p := &page{Title: "sandboxlab mutate", Who: m.Identity.who(), LeadBad: m.Gate != verdict.Pass,
		Stryker: m.Stryker(o), ElementsJS: template.JS(elementsJS), ElementsVersion: ElementsVersion, License: elementsLicense}
	p.Lead = fmt.Sprintf("%s (--fail-on %s; %d %s at a time; %.0f s).", gateSentence(m, parts), m.FailOn, m.Jobs,
		yesNo(m.Jobs == 1, "defect", "defects"), float64(m.MS)/1000)
	openedBy := map[string][]string{}
	for _, d := range m.Defects {
		for _, c := range d.EscapedAttacks {
			openedBy[c] = append(openedBy[c], d.ID)
		}
	}
	for _, pt := range parts {
		s := pt.res.Summary
		part := pagePart{Heading: partHeading(pt.res.Suite, "Mutation run", "suite"), Summary: &summaryView{Header: summaryHeader,
			Row: []string{itoa(s.Defects), itoa(s.Caught), itoa(s.Escaped), itoa(s.Exact), itoa(s.TooWide), itoa(s.Extra),
				itoa(s.Different), itoa(s.Hung), itoa(s.Unexpected), string(pt.res.Gate)}, Gate: string(pt.res.Gate)}}
		if !pt.res.BaselineOK {
			part.Problems = append([]string{"The baseline is broken, so none of this suite's defects was run:"}, pt.res.Problems...)
		}
		if len(pt.defects) > 0 {
			part.Bullets = append(part.Bullets, fmt.Sprintf("%d of %d defects caught; %d failed exactly the checks predicted.", s.Caught, s.Defects, s.Exact))
		}
		probes := m.Probes(pt.res.Suite)
		for _, d := range pt.defects {
			status, _, _, _ := MutantStatus(d, probes)
			part.Defects = append(part.Defects, defectRow{ID: d.ID, Summary: d.Summary, Predicted: list(d.PredictedChecks), Failed: list(d.FailedChecks),
				Outcome: string(d.Outcome), PredictedAttacks: cells(d.PredictedAttacks), Attacks: cells(d.EscapedAttacks), Why: noteSeen(d),
				Status: status, Unexpected: len(d.Unexpected) > 0})
		}
		if c := pt.checks; c != nil {
			part.Baseline = fmt.Sprintf("Checks on the correct sandbox: %d passed, %d failed (%.0f s for the checks and the matrix).", c.Passed, c.Failed, float64(pt.ms)/1000)
			part.Checks = checkRows(c)
		}
		if a := pt.attacks; a != nil {
			h := AttackHeatMap(a, "Attack × level on the correct sandbox", openedBy)
			part.HeatMap = &h
		}
		p.Parts = append(p.Parts, part)
	}
	return p, nil
}

// partHeading heads a suite's part: the course's as a report of the
// course alone, another's with its name.
func partHeading(s verdict.Suite, course, other string) string {
	if isCourse(s) {
		return course
	}
	return suiteWord(s) + " " + other
}

// page draws the attack × sandbox matrix: one heat map, the attacks of
// every suite as rows.
func (s *Sandboxes) page(Options) (*page, error) {
	escaped, na := 0, 0
	for _, c := range s.Cells {
		switch c.State {
		case Escaped:
			escaped++
		case NotApplicable:
			na++
		}
	}
	p := &page{Title: "sandboxlab attack --sandbox", Who: s.Identity.who(), LeadBad: escaped > 0}
	p.Lead = fmt.Sprintf("%d of %d cells escaped, %d not applicable, under %d sandboxes.", escaped, len(s.Cells), na, len(s.Sandboxes))
	h := SandboxHeatMap(s, "Attack × sandbox")
	p.Parts = append(p.Parts, pagePart{Heading: "Attack × sandbox", HeatMap: &h})
	return p, nil
}
