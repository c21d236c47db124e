// Package verdict is sandboxlab's shared vocabulary: the suites, the
// outcome of a planted defect's run, the gate and its policy, the exit
// codes every command uses, and the id of an attack cell. Everything that judges or
// reports a run (the harness, the report renderers, the CLI) takes these
// words from here, so that each is defined once.
//
// It sits at the bottom of the import graph: the standard library only.
package verdict

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Suite groups the checks, planted defects and attacks that are run,
// judged and reported together. The course's suite is pinned: its tables
// reproduce the course notes. Everything beyond the course is the
// hardening suite, reported after it.
type Suite string

const (
	// Course is the course's suite: 26 checks, 29 defects, 16 attacks at
	// levels L0–L5.
	Course Suite = "course"
	// Hardening is everything beyond the course.
	Hardening Suite = "hardening"
)

// Suites lists every suite in report order: the course first.
var Suites = []Suite{Course, Hardening}

// AllSuites is the --suite value that selects every suite.
const AllSuites = "all"

// CourseLevels is how many levels the course's matrix has, L0–L5,
// whatever other levels the sandbox gains.
const CourseLevels = 6

// OrCourse returns s, or Course for the zero Suite: a report written
// before there were suites holds the course's members only.
func (s Suite) OrCourse() Suite {
	if s == "" {
		return Course
	}
	return s
}

// HasLevel reports whether the suite's attacks run, and its matrix shows,
// level n: the course's L0–L5, the hardening suite's every level.
func (s Suite) HasLevel(n int) bool {
	if n < 0 {
		return false
	}
	return s.OrCourse() != Course || n < CourseLevels
}

// In reports whether s is one of suites; no suites at all selects every
// suite. The zero Suite is read as Course.
func (s Suite) In(suites []Suite) bool {
	return len(suites) == 0 || slices.Contains(suites, s.OrCourse())
}

// ParseSuites reads a --suite value: a suite's name, several names
// separated by commas, or all. The suites come back in report order, each
// once.
func ParseSuites(s string) ([]Suite, error) {
	want := map[Suite]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == AllSuites {
			return slices.Clone(Suites), nil
		}
		if !slices.Contains(Suites, Suite(part)) {
			return nil, fmt.Errorf("unknown suite %q (want %s or %s)", part, suiteNames(), AllSuites)
		}
		want[Suite(part)] = true
	}
	var out []Suite
	for _, su := range Suites {
		if want[su] {
			out = append(out, su)
		}
	}
	return out, nil
}

// SuiteList writes suites as ParseSuites reads them: names joined by
// commas ("" for none).
func SuiteList(suites []Suite) string {
	names := make([]string, len(suites))
	for i, s := range suites {
		names[i] = string(s)
	}
	return strings.Join(names, ",")
}

// suiteNames lists the suites for messages: "course, hardening".
func suiteNames() string { return strings.ReplaceAll(SuiteList(Suites), ",", ", ") }

// Outcome compares the checks that failed with a defect on against the
// checks predicted to fail, or says why there is no comparison.
type Outcome string

const (
	// Exact: exactly the predicted checks failed.
	Exact Outcome = "exact"
	// TooWide: fewer failed than predicted.
	TooWide Outcome = "too_wide"
	// Extra: the predicted ones and more failed.
	Extra Outcome = "extra"
	// Different: some predicted did not fail, some unpredicted did.
	Different Outcome = "different"
	// Escaped: no check failed; the suite missed the defect.
	Escaped Outcome = "escaped"
	// Hung: the defect's run did not finish in its time.
	Hung Outcome = "hung"
	// Error: the defect's run failed and gave no verdict.
	Error Outcome = "error"
	// Untestable: what the defect breaks does not exist on this host (it
	// needs a Feature the host lacks), so it was not run: no probe could
	// tell it from the correct sandbox here. It is neither caught nor
	// escaped, and the report says why.
	Untestable Outcome = "untestable"
)

// KnownOutcomes are the outcomes a known divergence in predictions.yaml
// may name: those a finished run can have.
var KnownOutcomes = []Outcome{Exact, TooWide, Extra, Escaped, Different}

// Caught reports whether some check failed: the suite noticed the defect.
func (o Outcome) Caught() bool {
	return o != Escaped && o != Hung && o != Error && o != Untestable
}

// NoVerdict reports whether the run gave no verdict at all.
func (o Outcome) NoVerdict() bool { return o == Hung || o == Error }

// Feature names something of the host's kernel that a planted defect or an
// attack needs in order to show anything: where the host lacks it, the
// defect is Untestable and the attack's cells are not applicable, each
// with the reason the host measured (sandbox/evidence.Lacks).
type Feature string

// CompatEntry: the kernel takes system calls through a second ABI's entry
// from a native process (on amd64, i386's int $0x80).
const CompatEntry Feature = "compat_entry"

// Compare returns the outcome of a finished run: the checks that failed
// against those predicted to.
func Compare(failed, predicted []string) Outcome {
	f, p := set(failed), set(predicted)
	switch {
	case len(f) == 0:
		return Escaped
	case subset(f, p) && subset(p, f):
		return Exact
	case subset(f, p):
		return TooWide
	case subset(p, f):
		return Extra
	}
	return Different
}

// Gate is the mutation run's overall verdict.
type Gate string

const (
	// Pass: nothing the gate's policy fails on happened.
	Pass Gate = "pass"
	// Fail: something did, or the baseline is broken.
	Fail Gate = "fail"
)

// FailOn is the gate's policy: what fails it.
type FailOn string

const (
	// FailOnEscape fails on an unexpected escape only (the default).
	FailOnEscape FailOn = "escape"
	// FailOnAny fails on any divergence from the predictions.
	FailOnAny FailOn = "any"
	// FailOnNever only reports.
	FailOnNever FailOn = "never"
)

// Decide returns the gate of a run, or of one suite's share of it, under
// the policy: a broken baseline fails it; then escape fails it on an
// unexpected escape or a flaky probe, any on any unexpected result or a
// flaky probe, never on nothing.
func (f FailOn) Decide(baselineOK bool, unexpected, unexpectedEscapes, flaky int) Gate {
	fails := !baselineOK
	switch f {
	case FailOnNever:
	case FailOnAny:
		fails = fails || unexpected > 0 || flaky > 0
	default:
		fails = fails || unexpectedEscapes > 0 || flaky > 0
	}
	if fails {
		return Fail
	}
	return Pass
}

// ParseFailOn checks a --fail-on value.
func ParseFailOn(s string) (FailOn, error) {
	switch f := FailOn(s); f {
	case FailOnEscape, FailOnAny, FailOnNever:
		return f, nil
	}
	return "", fmt.Errorf("want %s, %s or %s, got %q", FailOnEscape, FailOnAny, FailOnNever, s)
}

// Exit codes, shared by every command.
const (
	// ExitOK: the gate holds, the checks passed, the command did its job.
	ExitOK = 0
	// ExitInternal: a usage or internal error.
	ExitInternal = 1
	// ExitEscape: an unexpected escape (a defect no check caught, an
	// attack cell that got through, neither predicted nor known; a defect
	// whose run hung counts as one), or a failed check.
	ExitEscape = 2
	// ExitDivergence: another divergence from the predictions (only with
	// --fail-on any).
	ExitDivergence = 3
	// ExitBaseline: the baseline is broken.
	ExitBaseline = 4
	// ExitFlaky: a probe's verdict changed between the repeats of one
	// run (mutate --repeat), and nothing worse happened: a verdict that
	// cannot be trusted never passes in silence.
	ExitFlaky = 5
	// ExitRunBusy: nothing ran because the host's run slots stayed taken;
	// try again (sysexits' EX_TEMPFAIL).
	ExitRunBusy = 75
	// ExitRunRefused: the sandbox refused or failed to run the program
	// (as timeout(1) and container tools use 125).
	ExitRunRefused = 125
	// ExitRunNoExec: the program was found but could not be executed.
	ExitRunNoExec = 126
	// ExitRunNotFound: the program was not found.
	ExitRunNotFound = 127
)

// Words of a probe's verdict, as a flaky probe's repeats are listed.
const (
	// CheckPassed and CheckFailed: a check's verdict.
	CheckPassed = "pass"
	CheckFailed = "fail"
	// CellStopped: an attack cell the host saw stopped (CellEscaped: one
	// that got through).
	CellStopped = "stopped"
)

// Words of the attack matrix.
const (
	// CellEscaped: the host saw the attack's evidence.
	CellEscaped = "escaped"
	// CellUnexpected: an escape at or above the level expected to stop
	// the attack, which the correct sandbox never has.
	CellUnexpected = "ESCAPED"
	// CellNotRun: the cell was not part of the run.
	CellNotRun = "not run"
	// CellNA: the cell does not apply on this host (what the attack needs
	// of the kernel is not there), so it was not run.
	CellNA = "n/a"
	// NeverStopped: no column of the run stops the attack.
	NeverStopped = "never"
)

// Cell names one attack in one column of the matrix: attack@L<n> for a
// level of the sandbox, or attack@<name> for a column that is not a
// level (another sandbox judged by the same attacks).
type Cell struct {
	// Attack is the attack's id.
	Attack string
	// Column is "L<n>" for level n, or another column's name.
	Column string
}

// AtLevel returns the cell of attack at level n.
func AtLevel(attack string, n int) Cell { return Cell{Attack: attack, Column: LevelColumn(n)} }

// LevelColumn names the column of level n: L<n>.
func LevelColumn(n int) string { return "L" + strconv.Itoa(n) }

// String formats the cell as predictions.yaml and the reports write it.
func (c Cell) String() string { return c.Attack + "@" + c.Column }

// Level returns the cell's level, and false when its column is not a level.
func (c Cell) Level() (int, bool) { return ColumnLevel(c.Column) }

// ColumnLevel returns the level a column names, and false when it names
// none ("L" followed by decimal digits, without a sign or leading zero).
func ColumnLevel(column string) (int, bool) {
	digits, ok := strings.CutPrefix(column, "L")
	if !ok || digits == "" || (len(digits) > 1 && digits[0] == '0') {
		return 0, false
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}

// ErrCell wraps every error of ParseCell.
var ErrCell = errors.New("not an attack cell")

// ParseCell reads attack@column. The attack is lower case letters, digits
// and underscores; the column is a level (L<n>) or a name of letters,
// digits, '-', '_', '.' and ':' that does not begin with 'L'.
func ParseCell(s string) (Cell, error) {
	attack, column, ok := strings.Cut(s, "@")
	switch {
	case !ok:
		return Cell{}, fmt.Errorf("%w: %q has no '@' (want attack@L<level>)", ErrCell, s)
	case !validWord(attack, "_") || attack[0] == '_':
		return Cell{}, fmt.Errorf("%w: %q: bad attack id %q", ErrCell, s, attack)
	case !validWord(strings.ToLower(column), "-_.:"):
		return Cell{}, fmt.Errorf("%w: %q: bad column %q", ErrCell, s, column)
	case strings.HasPrefix(column, "L"):
		if _, ok := ColumnLevel(column); !ok {
			return Cell{}, fmt.Errorf("%w: %q: bad level %q", ErrCell, s, column)
		}
	}
	return Cell{Attack: attack, Column: column}, nil
}

// validWord reports whether s is non-empty and made of lower case ASCII
// letters, digits and the extra bytes.
func validWord(s, extra string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || isDigit(c) || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func set(ss []string) map[string]bool {
	m := make(map[string]bool, len(ss))
	for _, s := range ss {
		m[s] = true
	}
	return m
}

func subset(a, b map[string]bool) bool {
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
