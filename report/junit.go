package report

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"

	"sandboxlab/verdict"
)

// The JUnit XML model: the common schema CI systems read (Jenkins, GitLab,
// GitHub test reporters, Buildkite): testsuites > testsuite > testcase, a
// testcase holding at most one of skipped, error or failure, then
// system-out. Times are seconds with a decimal point.

// TestSuites is the root element of a JUnit XML file. Its counts are the
// sums over its suites.
type TestSuites struct {
	XMLName  xml.Name    `xml:"testsuites"`
	Name     string      `xml:"name,attr,omitempty"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Suites   []TestSuite `xml:"testsuite"`
}

// TestSuite is one group of test cases. Its counts are those of its cases.
type TestSuite struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Time     string `xml:"time,attr"`
	// Properties is nil when there are none: an empty <properties/> is
	// not valid in every reader's schema.
	Properties *Properties `xml:"properties,omitempty"`
	Cases      []TestCase  `xml:"testcase"`
}

// Properties holds a suite's properties.
type Properties struct {
	List []Property `xml:"property"`
}

// Property is a name and a value attached to a suite: who ran it, the
// gate's policy.
type Property struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// TestCase is one verdict. At most one of Skipped, Error and Failure is
// set; none means it passed.
type TestCase struct {
	Name      string `xml:"name,attr"`
	ClassName string `xml:"classname,attr"`
	Time      string `xml:"time,attr"`
	// Skipped marks a result that is not asserted (a known divergence).
	Skipped *Skipped `xml:"skipped,omitempty"`
	// Error marks a case that gave no verdict (a hung or failed run).
	Error *Problem `xml:"error,omitempty"`
	// Failure marks a verdict that went the wrong way.
	Failure *Problem `xml:"failure,omitempty"`
	// SystemOut carries what the host saw, for every outcome.
	SystemOut string `xml:"system-out,omitempty"`
}

// Problem is a failure or an error: a one-line message, a type, and the
// details as text.
type Problem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// Skipped says why a case is skipped.
type Skipped struct {
	Message string `xml:"message,attr,omitempty"`
}

// The statuses of a JUnit test case.
const (
	StatusPassed  = "passed"
	StatusFailed  = "failed"
	StatusError   = "error"
	StatusSkipped = "skipped"
)

// Status is StatusPassed, StatusFailed, StatusError or StatusSkipped.
func (c TestCase) Status() string {
	switch {
	case c.Failure != nil:
		return StatusFailed
	case c.Error != nil:
		return StatusError
	case c.Skipped != nil:
		return StatusSkipped
	}
	return StatusPassed
}

// seconds formats milliseconds as JUnit's seconds.
func seconds(ms int64) string {
	return strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64)
}

// newSuite makes a suite and counts its cases. ms < 0 sums the cases'
// times (sequential runs); otherwise it is the suite's wall time.
func newSuite(name string, ms int64, props []Property, cases []TestCase) TestSuite {
	s := TestSuite{Name: name, Tests: len(cases), Cases: cases}
	if len(props) > 0 {
		s.Properties = &Properties{List: props}
	}
	var sum float64
	for _, c := range cases {
		switch c.Status() {
		case StatusFailed:
			s.Failures++
		case StatusError:
			s.Errors++
		case StatusSkipped:
			s.Skipped++
		}
		t, _ := strconv.ParseFloat(c.Time, 64)
		sum += t
	}
	if ms < 0 {
		s.Time = strconv.FormatFloat(sum, 'f', 3, 64)
	} else {
		s.Time = seconds(ms)
	}
	return s
}

// newSuites wraps suites in the root element and sums their counts.
func newSuites(name string, suites ...TestSuite) *TestSuites {
	out := &TestSuites{Name: name, Suites: suites}
	var sum float64
	for _, s := range suites {
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Errors += s.Errors
		out.Skipped += s.Skipped
		t, _ := strconv.ParseFloat(s.Time, 64)
		sum += t
	}
	out.Time = strconv.FormatFloat(sum, 'f', 3, 64)
	return out
}

// properties says who ran a report.
func (id Identity) properties() []Property {
	return []Property{
		{"uid", strconv.Itoa(id.UID)},
		{"root", strconv.FormatBool(id.Root)},
		{"program_uid", strconv.Itoa(id.ProgramUID)},
	}
}

func withDefect(props []Property, defect string) []Property {
	if defect != "" {
		props = append(props, Property{"defect", defect})
	}
	return props
}

// JUnit returns one test case per check; a failed check is a failure
// whose message is its evidence. Each suite is a test suite: the course's
// is named check, another's check.<suite>.
func (c *Checks) JUnit() *TestSuites {
	suites := c.suites()
	if len(suites) == 0 {
		suites = []verdict.Suite{verdict.Course}
	}
	var out []TestSuite
	for _, s := range suites {
		out = append(out, c.InSuite(s).suite(s))
	}
	return newSuites("sandboxlab check", out...)
}

// suite is the JUnit suite of the checks, which are all of suite s.
func (c *Checks) suite(s verdict.Suite) TestSuite {
	cases := make([]TestCase, 0, len(c.Checks))
	for _, ch := range c.Checks {
		tc := TestCase{Name: ch.ID, ClassName: junitName("sandboxlab.check", s), Time: seconds(ch.MS)}
		detail := fmt.Sprintf("promise: %s\nlevel: L%d\nevidence: %s\n", ch.Promise, ch.Level, ch.Evidence)
		if ch.Passed {
			tc.SystemOut = detail
		} else {
			tc.Failure = &Problem{Message: ch.Evidence, Type: "broken promise", Text: detail}
		}
		cases = append(cases, tc)
	}
	return newSuite(junitName("check", s), -1, suiteProperty(withDefect(c.Identity.properties(), c.Defect), s), cases)
}

// JUnit returns one test case per cell. A cell fails when it escaped at or
// above the level expected to stop its attack; an escape below that level
// is what the matrix is meant to show, so it passes. Without Expected no
// cell can fail. Each suite is a test suite: the course's is named
// attack, another's attack.<suite>.
func (a *Attacks) JUnit() *TestSuites {
	suites := a.suites()
	if len(suites) == 0 {
		suites = []verdict.Suite{verdict.Course}
	}
	var out []TestSuite
	for _, s := range suites {
		out = append(out, a.InSuite(s).suite(s))
	}
	return newSuites("sandboxlab attack", out...)
}

// suite is the JUnit suite of the matrix, whose attacks are all of suite s.
func (a *Attacks) suite(s verdict.Suite) TestSuite {
	cases := make([]TestCase, 0, len(a.Cells))
	for _, c := range a.Cells {
		tc := TestCase{Name: c.Name(), ClassName: junitName("sandboxlab.attack", s), Time: seconds(c.MS)}
		want, known := a.Expected[c.Attack]
		var verdict string
		switch {
		case c.NA != "":
			tc.Skipped = &Skipped{Message: "not applicable on this host: " + c.NA}
			cases = append(cases, tc)
			continue
		case a.UnexpectedEscape(c):
			verdict = fmt.Sprintf("escaped at L%d, where L%d and above are expected to stop it", c.Level, want)
			tc.Failure = &Problem{Message: verdict + ": " + c.Evidence, Type: "unexpected escape", Text: verdict + "\nevidence: " + c.Evidence + "\n"}
		case c.Escaped && known:
			verdict = fmt.Sprintf("escaped, as expected below L%d", want)
		case c.Escaped:
			verdict = "escaped (no expected level given)"
		default:
			verdict = "stopped by " + c.StoppedBy
		}
		if tc.Failure == nil {
			tc.SystemOut = verdict + "\nevidence: " + c.Evidence + "\n"
		}
		cases = append(cases, tc)
	}
	return newSuite(junitName("attack", s), -1, suiteProperty(withDefect(a.Identity.properties(), a.Defect), s), cases)
}

// JUnit returns a test case for the baseline and one per defect: a
// failure when the defect has unexpected results (the message is the
// diff), an error when its run gave no verdict, skipped when it diverges
// from its prediction in the known way (the equivalent mutants), passed
// otherwise. Each suite is a test suite with its own baseline case: the
// course's is named mutate, another's mutate.<suite>. A run of one suite
// gives its test suite the run's wall time; with several, each gets the
// sum of its cases' times.
func (m *Mutation) JUnit() *TestSuites {
	parts := m.parts()
	suites := make([]TestSuite, 0, len(parts))
	for _, pt := range parts {
		class := junitName("sandboxlab.mutate", pt.res.Suite)
		cases := make([]TestCase, 0, len(pt.defects)+1)
		base := TestCase{Name: "baseline", ClassName: class, Time: seconds(pt.ms)}
		if pt.res.BaselineOK {
			base.SystemOut = baselineDetail(pt)
		} else {
			base.Failure = &Problem{Message: "the baseline is broken: " + strings.Join(pt.res.Problems, "; "), Type: "broken baseline", Text: baselineDetail(pt)}
		}
		cases = append(cases, base)
		for _, d := range pt.defects {
			tc := TestCase{Name: d.ID, ClassName: class, Time: seconds(d.MS)}
			detail := defectDetail(d)
			switch status := DefectStatus(d); status {
			case StatusError:
				tc.Error = &Problem{Message: strings.Join(d.Unexpected, "; "), Type: string(d.Outcome), Text: detail}
			case StatusFailed:
				typ := "prediction divergence"
				if d.UnexpectedEscape {
					typ = "unexpected escape"
				}
				tc.Failure = &Problem{Message: strings.Join(d.Unexpected, "; "), Type: typ, Text: detail}
			case StatusSkipped:
				msg := "not testable on this host: " + d.Error
				if d.Outcome != verdict.Untestable {
					msg = d.Known.String()
				}
				tc.Skipped = &Skipped{Message: msg}
				tc.SystemOut = detail
			default:
				tc.SystemOut = detail
			}
			cases = append(cases, tc)
		}
		// A flaky probe is a failed test of its own: a verdict that changes
		// between repeats is never a pass.
		for _, f := range m.FlakesIn(pt.res.Suite) {
			cases = append(cases, TestCase{Name: flakeName(f), ClassName: class,
				Failure: &Problem{Message: "verdicts changed between repeats: " + strings.Join(f.Verdicts, ", "), Type: "flaky"}})
		}
		props := append(m.Identity.properties(),
			Property{"fail_on", string(m.FailOn)}, Property{"gate", string(pt.res.Gate)}, Property{"jobs", strconv.Itoa(m.Jobs)})
		props = append(props, m.Run.properties()...)
		ms := m.MS
		if len(parts) > 1 {
			ms = -1
		}
		suites = append(suites, newSuite(junitName("mutate", pt.res.Suite), ms, suiteProperty(props, pt.res.Suite), cases))
	}
	return newSuites("sandboxlab mutate", suites...)
}

// flakeName is the test case name of a flaky probe.
func flakeName(f Flake) string {
	if f.Defect == "" {
		return "flaky " + f.Probe
	}
	return "flaky " + f.Probe + " with " + f.Defect
}

// DefectStatus is the JUnit status of a defect's test case: an error when
// its run gave no verdict, failed when something is unexpected, skipped
// for a known escape (an equivalent mutant: no check can catch it) and
// for a defect this host cannot test, passed otherwise, known divergences
// that were caught included.
func DefectStatus(d Defect) string {
	switch {
	case d.Outcome == verdict.Untestable:
		return StatusSkipped
	case d.Outcome.NoVerdict():
		return StatusError
	case len(d.Unexpected) > 0:
		return StatusFailed
	case d.Known != nil && d.Outcome == verdict.Escaped:
		return StatusSkipped
	}
	return StatusPassed
}

// defectDetail is the full diff of one defect, for the test case's text.
func defectDetail(d Defect) string {
	var b strings.Builder
	fmt.Fprintf(&b, "defect: %s: %s\n", d.ID, d.Summary)
	fmt.Fprintf(&b, "site: %s\n", d.Site)
	fmt.Fprintf(&b, "outcome: %s\n", d.Outcome)
	fmt.Fprintf(&b, "predicted to fail: %s\nfailed: %s\n", list(d.PredictedChecks), list(d.FailedChecks))
	fmt.Fprintf(&b, "predicted attack escapes: %s\nattack escapes: %s\n", cells(d.PredictedAttacks), cells(d.EscapedAttacks))
	if d.Known != nil {
		fmt.Fprintf(&b, "%s\n", d.Known)
	}
	for _, u := range d.Unexpected {
		fmt.Fprintf(&b, "unexpected: %s\n", u)
	}
	for _, s := range d.Seen {
		fmt.Fprintf(&b, "seen: %s %s: %s\n", s.Probe, seenVerb(s.Verdict), s.Evidence)
	}
	if d.Error != "" {
		fmt.Fprintf(&b, "error: %s\n", d.Error)
	}
	return b.String()
}

func baselineDetail(pt mutationPart) string {
	var s strings.Builder
	if pt.checks != nil {
		fmt.Fprintf(&s, "checks: %d passed, %d failed\n", pt.checks.Passed, pt.checks.Failed)
	}
	if pt.attacks != nil {
		fmt.Fprintf(&s, "attack cells escaped: %d of %d\n", len(pt.attacks.Escaped()), len(pt.attacks.Cells))
	}
	for _, p := range pt.res.Problems {
		fmt.Fprintf(&s, "problem: %s\n", p)
	}
	return s.String()
}

// JUnit returns one test case per task and tool, and one for the vague
// description. A row fails only when it differs from ExpectSolved; the
// naive tool's failures are the table's point, not a test failure.
func (a *Agent) JUnit() *TestSuites {
	cases := make([]TestCase, 0, len(a.Rows)+1)
	add := func(r AgentRow, name string) {
		tc := TestCase{Name: name, ClassName: "sandboxlab.agent", Time: seconds(0), SystemOut: r.Result() + "\n"}
		if r.ExpectSolved != nil && *r.ExpectSolved != r.Solved {
			tc.Failure = &Problem{
				Message: fmt.Sprintf("expected %s, got %s", yesNo(*r.ExpectSolved, "solved", "not solved"), r.Result()),
				Type:    "agent result", Text: r.Result() + "\n",
			}
			tc.SystemOut = ""
		}
		cases = append(cases, tc)
	}
	for _, r := range a.Rows {
		add(r, r.Task+"/"+r.Tool)
	}
	if a.Vague.Task != "" {
		add(a.Vague, a.Vague.Task+"/"+a.Vague.Tool+" (vague description)")
	}
	return newSuites("sandboxlab agent", newSuite("agent", -1, nil, cases))
}

// JUnit returns one suite with a test case per measured row. Experiments
// measure rather than judge, so every case passes and carries its figure.
func (e *Experiment) JUnit() *TestSuites {
	return newSuites("sandboxlab experiment", e.suite())
}

func (e *Experiment) suite() TestSuite {
	cases := make([]TestCase, 0, len(e.Rows))
	for _, r := range e.Rows {
		cases = append(cases, TestCase{Name: r.Case, ClassName: "sandboxlab.experiment." + e.ID, Time: seconds(0),
			SystemOut: r.Outcome + "\nmeasured: " + r.measured() + "\n"})
	}
	props := append(e.Identity.properties(), Property{"finding", e.Finding})
	return newSuite("experiment "+e.ID, -1, props, cases)
}

// JUnit returns one suite per experiment.
func (es Experiments) JUnit() *TestSuites {
	suites := make([]TestSuite, len(es))
	for i, e := range es {
		suites[i] = e.suite()
	}
	return newSuites("sandboxlab experiment", suites...)
}
