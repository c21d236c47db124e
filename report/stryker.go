package report

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"unicode/utf16"

	"sandboxlab/verdict"
)

// The Stryker report: the mutation-testing-report-schema's shape (schema
// version 2, pinned in third_party/), filled from a Mutation. Each
// planted defect is one mutant at its planted site, mutants.On(<const>),
// whose replacement is "true": with the defect on, that is what the call
// returns. A defect planted at several sites is one mutant, at the first.

// StrykerReport is the root of the schema: MutationTestResult.
type StrykerReport struct {
	Schema        string                      `json:"$schema,omitempty"`
	SchemaVersion string                      `json:"schemaVersion"`
	Thresholds    StrykerThresholds           `json:"thresholds"`
	Files         map[string]*StrykerFile     `json:"files"`
	TestFiles     map[string]*StrykerTestFile `json:"testFiles,omitempty"`
	Performance   *StrykerPerformance         `json:"performance,omitempty"`
	Framework     *StrykerFramework           `json:"framework,omitempty"`
	System        *StrykerSystem              `json:"system,omitempty"`
	Config        map[string]any              `json:"config,omitempty"`
}

// StrykerThresholds are the mutation scores (percent) from which a report
// is coloured good (High) or bad (below Low).
type StrykerThresholds struct {
	High int `json:"high"`
	Low  int `json:"low"`
}

// StrykerFile is one mutated source file.
type StrykerFile struct {
	Language string          `json:"language"`
	Source   string          `json:"source"`
	Mutants  []StrykerMutant `json:"mutants"`
}

// StrykerMutant is one planted defect.
type StrykerMutant struct {
	ID             string          `json:"id"`
	MutatorName    string          `json:"mutatorName"`
	Description    string          `json:"description,omitempty"`
	Replacement    string          `json:"replacement,omitempty"`
	Location       StrykerLocation `json:"location"`
	Status         string          `json:"status"`
	StatusReason   string          `json:"statusReason,omitempty"`
	KilledBy       []string        `json:"killedBy,omitempty"`
	CoveredBy      []string        `json:"coveredBy,omitempty"`
	TestsCompleted *int            `json:"testsCompleted,omitempty"`
	Duration       *int64          `json:"duration,omitempty"`
	Static         bool            `json:"static"`
}

// StrykerLocation is a span of source: start inclusive, end exclusive,
// lines and columns from 1, columns in UTF-16 code units (the component
// indexes JavaScript strings).
type StrykerLocation struct {
	Start StrykerPosition `json:"start"`
	End   StrykerPosition `json:"end"`
}

// StrykerPosition is a line and a column, both from 1.
type StrykerPosition struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// StrykerTestFile holds the tests of one file: a check, or an attack's
// cells.
type StrykerTestFile struct {
	Tests []StrykerTest `json:"tests"`
}

// StrykerTest is one probe: a check, or one attack cell.
type StrykerTest struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// StrykerPerformance is the run's time by phase, in milliseconds.
type StrykerPerformance struct {
	Setup      int64 `json:"setup"`
	InitialRun int64 `json:"initialRun"`
	Mutation   int64 `json:"mutation"`
}

// StrykerFramework names the tool that wrote the report.
type StrykerFramework struct {
	Name         string            `json:"name"`
	Version      string            `json:"version,omitempty"`
	Dependencies map[string]string `json:"dependencies,omitempty"`
}

// StrykerSystem describes the machine that wrote the report.
type StrykerSystem struct {
	CI  bool        `json:"ci"`
	OS  *StrykerOS  `json:"os,omitempty"`
	CPU *StrykerCPU `json:"cpu,omitempty"`
	RAM *StrykerRAM `json:"ram,omitempty"`
}

// StrykerOS is the operating system.
type StrykerOS struct {
	Platform    string `json:"platform"`
	Description string `json:"description,omitempty"`
	Version     string `json:"version,omitempty"`
}

// StrykerCPU is the processor.
type StrykerCPU struct {
	LogicalCores int    `json:"logicalCores"`
	Model        string `json:"model,omitempty"`
}

// StrykerRAM is the memory, in MB.
type StrykerRAM struct {
	Total int64 `json:"total"`
}

// Stryker's statuses that a defect's run can have.
const (
	StatusKilled       = "Killed"
	StatusSurvived     = "Survived"
	StatusTimeout      = "Timeout"
	StatusRuntimeError = "RuntimeError"
	StatusNoCoverage   = "NoCoverage"
	StatusIgnored      = "Ignored"
)

// StrykerThresholdHigh and StrykerThresholdLow are Stryker's own
// defaults: the course's 27 of 29 (93%) is above High.
const (
	StrykerThresholdHigh = 80
	StrykerThresholdLow  = 60
)

// MutantStatus maps one defect's run to Stryker's words, in one place:
//
//   - Timeout when the run hung, RuntimeError when it gave no verdict;
//   - Killed when some check failed or an attack cell escaped that the
//     correct sandbox stops (killedBy names them: check ids, cells
//     attack@L<n>);
//   - Survived otherwise: no probe noticed. A survivor whose escape
//     predictions.yaml records as known (the equivalent mutants
//     traversal_ok and abs_path_ok) stays Survived, with the recorded
//     reason in statusReason, rather than Ignored: it was run and not
//     caught, and the score then reads as the course's "27 of 29";
//   - NoCoverage when no probe reaches the planted site (the baseline's
//     coverage: Defect.NotReached);
//   - Ignored when this host cannot test it (Untestable: it was not run),
//     with the reason.
//
// coveredBy names the probes that reach the site (Defect.Reached); a
// report from before coverage was recorded names every probe of the
// defect's suite that its run ran (probes).
//
// reason says why, in the words of the per-defect table.
func MutantStatus(d Defect, probes []string) (status string, killedBy, coveredBy []string, reason string) {
	coveredBy = slices.Clone(probes)
	if d.Reached != nil || d.NotReached {
		coveredBy = slices.Clone(d.Reached)
	}
	switch {
	case d.Outcome == verdict.Untestable:
		status = StatusIgnored
	case d.Outcome == verdict.Hung:
		status = StatusTimeout
	case d.Outcome == verdict.Error:
		status = StatusRuntimeError
	case d.NotReached || len(coveredBy) == 0 && len(d.FailedChecks) == 0 && len(d.EscapedAttacks) == 0:
		status = StatusNoCoverage
	case len(d.FailedChecks) > 0 || len(d.EscapedAttacks) > 0:
		status = StatusKilled
		killedBy = append(slices.Clone(d.FailedChecks), d.EscapedAttacks...)
	default:
		status = StatusSurvived
	}
	parts := []string{fmt.Sprintf("outcome %s: predicted to fail %s, failed %s; predicted attack escapes %s, attack escapes %s",
		d.Outcome, list(d.PredictedChecks), list(d.FailedChecks), cells(d.PredictedAttacks), cells(d.EscapedAttacks))}
	if n := note(d); n != "" {
		parts = append(parts, n)
	}
	return status, killedBy, coveredBy, strings.Join(parts, "; ")
}

// Stryker returns the mutation report in the schema's shape.
func (m *Mutation) Stryker(o Options) *StrykerReport {
	r := &StrykerReport{
		SchemaVersion: "2",
		Thresholds:    StrykerThresholds{High: StrykerThresholdHigh, Low: StrykerThresholdLow},
		Files:         map[string]*StrykerFile{},
		TestFiles:     map[string]*StrykerTestFile{},
		Performance:   &StrykerPerformance{InitialRun: m.Baseline.MS, Mutation: max(0, m.MS-m.Baseline.MS)},
		Framework: &StrykerFramework{Name: "sandboxlab", Version: o.Version,
			Dependencies: map[string]string{"mutation-testing-report-schema": SchemaVersion}},
		System: o.System,
		Config: map[string]any{"failOn": m.FailOn, "jobs": m.Jobs, "gate": m.Gate},
	}
	if r.Framework.Version == "" {
		r.Framework.Version = "unknown"
	}
	var suites []string
	for _, pt := range m.parts() {
		suites = append(suites, string(pt.res.Suite))
	}
	r.Config["suites"] = suites

	probes := map[verdict.Suite][]string{}
	sources := map[string]*siteFile{}
	for _, d := range m.Defects {
		s := d.Suite.OrCourse()
		if _, ok := probes[s]; !ok {
			probes[s] = m.Probes(s)
		}
		site := d.Site
		if site == "" { // a report that does not say: still one file the component can show
			site = "unknown-site.go"
		}
		sf, ok := sources[site]
		if !ok {
			sf = readSiteFile(o, site)
			sources[site] = sf
			r.Files[site] = &StrykerFile{Language: "go", Source: sf.source, Mutants: []StrykerMutant{}}
		}
		status, killedBy, coveredBy, reason := MutantStatus(d, probes[s])
		loc, others := sf.locate(d.ID)
		desc := d.Summary
		switch {
		case sf.err != nil:
			desc += " (the site's line is unknown: " + sf.err.Error() + ")"
		case loc == nil:
			desc += fmt.Sprintf(" (no mutants.On call for %s in %s)", d.ID, site)
		case len(others) > 0:
			desc += " (also planted at " + yesNo(len(others) == 1, "line ", "lines ") + joinInts(others) + ")"
		}
		if loc == nil {
			loc = sf.firstLine()
		}
		mu := StrykerMutant{ID: d.ID, MutatorName: d.ID, Description: desc, Replacement: "true", Location: *loc,
			Status: status, StatusReason: reason, KilledBy: killedBy, CoveredBy: coveredBy}
		if status != StatusNoCoverage && status != StatusTimeout && status != StatusRuntimeError {
			n, ms := len(coveredBy), d.MS
			mu.TestsCompleted, mu.Duration = &n, &ms
		}
		r.Files[site].Mutants = append(r.Files[site].Mutants, mu)
	}
	m.strykerTests(r)
	return r
}

// strykerTests lists the probes as tests: each check in checks/<id>.go,
// each attack's cells in attacks/<id>.go (one file each, as the
// registries keep them).
func (m *Mutation) strykerTests(r *StrykerReport) {
	if c := m.Baseline.Checks; c != nil {
		for _, ch := range c.Checks {
			r.TestFiles["checks/"+ch.ID+".go"] = &StrykerTestFile{Tests: []StrykerTest{{ID: ch.ID, Name: ch.ID + ": " + ch.Promise}}}
		}
	}
	if a := m.Baseline.Attacks; a != nil {
		for _, c := range a.Cells {
			f := r.TestFiles["attacks/"+c.Attack+".go"]
			if f == nil {
				f = &StrykerTestFile{}
				r.TestFiles["attacks/"+c.Attack+".go"] = f
			}
			f.Tests = append(f.Tests, StrykerTest{ID: c.Name(), Name: fmt.Sprintf("%s at L%d", c.Attack, c.Level)})
		}
	}
	if len(r.TestFiles) == 0 {
		r.TestFiles = nil
	}
}

// writeStryker writes the report as indented JSON.
func writeStryker(w io.Writer, r *StrykerReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("encoding the stryker report: %w", err)
	}
	return nil
}

// siteFile is one planted site's source file and where its sites are.
type siteFile struct {
	path   string
	source string
	err    error
	finder func(path, id string) ([]SourceSpan, error)
}

// readSiteFile reads path from o's sources. A file that cannot be had
// becomes a one-line source that says so, so the report stays valid and
// says what is missing rather than placing mutants on lines it cannot
// show.
func readSiteFile(o Options, path string) *siteFile {
	sf := &siteFile{path: path, finder: o.Locate}
	if o.Sources == nil {
		sf.err = fmt.Errorf("no sources were given to the renderer")
	} else if b, err := fs.ReadFile(o.Sources, path); err != nil {
		sf.err = fmt.Errorf("reading %s: %w", path, err)
	} else {
		sf.source = string(b)
	}
	if sf.err != nil {
		sf.source = "// The source of " + path + " was not available when this report was written: " + sf.err.Error() + "\n"
	} else if o.Locate == nil {
		sf.err = fmt.Errorf("no site locator was given to the renderer")
	}
	return sf
}

// locate returns the first planted site of defect id and the lines of
// the others (nil, nil when the file has none). An error of the locator
// becomes the file's.
func (sf *siteFile) locate(id string) (*StrykerLocation, []int) {
	if sf.err != nil {
		return nil, nil
	}
	spans, err := sf.finder(sf.path, id)
	if err != nil {
		sf.err = err
		return nil, nil
	}
	if len(spans) == 0 {
		return nil, nil
	}
	var others []int
	for _, s := range spans[1:] {
		others = append(others, s.StartLine)
	}
	first := spans[0]
	return &StrykerLocation{Start: StrykerPosition{Line: first.StartLine, Column: first.StartColumn},
		End: StrykerPosition{Line: first.EndLine, Column: first.EndColumn}}, others
}

// firstLine spans the file's first line: where a mutant whose site is
// not found goes, with its description saying so.
func (sf *siteFile) firstLine() *StrykerLocation {
	line, _, _ := strings.Cut(sf.source, "\n")
	return &StrykerLocation{Start: StrykerPosition{Line: 1, Column: 1},
		End: StrykerPosition{Line: 1, Column: len(utf16.Encode([]rune(line))) + 1}}
}

// joinInts writes 3, 5 and 7 as "3, 5, 7".
func joinInts(ns []int) string {
	sort.Ints(ns)
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}
