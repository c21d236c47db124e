package verdict

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestCellRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		in     string
		attack string
		column string
		level  int
		isLvl  bool
	}{
		{"exfiltrate@L4", "exfiltrate", "L4", 4, true},
		{"fork_bomb@L12", "fork_bomb", "L12", 12, true},
		{"read_ssh_key@bubblewrap", "read_ssh_key", "bubblewrap", 0, false},
		{"read_ssh_key@sandboxlab:L6", "read_ssh_key", "sandboxlab:L6", 0, false},
		{"a2@gvisor-ptrace", "a2", "gvisor-ptrace", 0, false},
	} {
		c, err := ParseCell(tc.in)
		assert.NilError(t, err, tc.in)
		assert.Check(t, is.Equal(c, Cell{Attack: tc.attack, Column: tc.column}), tc.in)
		assert.Check(t, is.Equal(c.String(), tc.in))
		lvl, ok := c.Level()
		assert.Check(t, is.Equal(ok, tc.isLvl), tc.in)
		assert.Check(t, is.Equal(lvl, tc.level), tc.in)
	}
	assert.Check(t, is.Equal(AtLevel("exfiltrate", 10).String(), "exfiltrate@L10"))
}

func TestParseCellRejects(t *testing.T) {
	for _, in := range []string{"", "exfiltrate", "@L4", "Exfiltrate@L4", "_x@L4", "exfiltrate@", "exfiltrate@L04", "exfiltrate@L4x", "exfiltrate@L-1", "a@b@c", "exfil trate@L4"} {
		_, err := ParseCell(in)
		assert.Check(t, errors.Is(err, ErrCell), "%q: %v", in, err)
	}
}

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		failed, predicted []string
		want              Outcome
	}{
		{nil, []string{"a"}, Escaped},
		{[]string{"a"}, []string{"a"}, Exact},
		{[]string{"a"}, []string{"a", "b"}, TooWide},
		{[]string{"a", "b"}, []string{"a"}, Extra},
		{[]string{"a", "c"}, []string{"a", "b"}, Different},
		{[]string{"a"}, nil, Extra},
	} {
		assert.Check(t, is.Equal(Compare(tc.failed, tc.predicted), tc.want), "%v vs %v", tc.failed, tc.predicted)
	}
	for _, o := range []Outcome{Escaped, Hung, Error} {
		assert.Check(t, !o.Caught(), o)
	}
	for _, o := range []Outcome{Exact, TooWide, Extra, Different} {
		assert.Check(t, o.Caught(), o)
	}
}

func TestParseFailOn(t *testing.T) {
	for _, s := range []string{"escape", "any", "never"} {
		f, err := ParseFailOn(s)
		assert.NilError(t, err)
		assert.Check(t, is.Equal(string(f), s))
	}
	_, err := ParseFailOn("sometimes")
	assert.ErrorContains(t, err, `want escape, any or never, got "sometimes"`)
}

func TestParseSuites(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Suite
	}{
		{"course", []Suite{Course}},
		{"hardening", []Suite{Hardening}},
		{"all", []Suite{Course, Hardening}},
		{"hardening,course", []Suite{Course, Hardening}},
		{"course, course", []Suite{Course}},
	} {
		got, err := ParseSuites(tc.in)
		assert.NilError(t, err, tc.in)
		assert.Check(t, is.DeepEqual(got, tc.want), tc.in)
		again, err := ParseSuites(SuiteList(got))
		assert.NilError(t, err)
		assert.Check(t, is.DeepEqual(again, got), "SuiteList round-trips")
	}
	for _, bad := range []string{"", "courses", "Course", "course,", "none"} {
		_, err := ParseSuites(bad)
		assert.Check(t, is.ErrorContains(err, "(want course, hardening or all)"), "%q", bad)
	}
}

func TestSuiteLevels(t *testing.T) {
	for n := range CourseLevels {
		assert.Check(t, Course.HasLevel(n), n)
		assert.Check(t, Hardening.HasLevel(n), n)
	}
	assert.Check(t, !Course.HasLevel(CourseLevels), "the course's matrix stops at L5")
	assert.Check(t, Suite("").HasLevel(5) && !Suite("").HasLevel(6), "the zero suite is the course")
	assert.Check(t, Hardening.HasLevel(CourseLevels))
	assert.Check(t, !Hardening.HasLevel(-1))

	assert.Check(t, Hardening.In(nil), "no selection selects every suite")
	assert.Check(t, !Hardening.In([]Suite{Course}))
	assert.Check(t, Suite("").In([]Suite{Course}))
}

// TestVocabularyIsStandardLibraryOnly: the sandbox library links this
// package (a planted defect's suite), so it may link nothing else.
func TestVocabularyIsStandardLibraryOnly(t *testing.T) {
	goTool, err := exec.LookPath("go")
	assert.NilError(t, err, "go list needs the go command on PATH")
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(strings.Fields(string(out)), []string{"sandboxlab/verdict"}))
}

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		failOn              FailOn
		ok                  bool
		unexpected, escapes int
		want                Gate
	}{
		{FailOnEscape, true, 0, 0, Pass},
		{FailOnEscape, true, 2, 0, Pass},
		{FailOnEscape, true, 2, 1, Fail},
		{FailOnEscape, false, 0, 0, Fail},
		{FailOnAny, true, 1, 0, Fail},
		{FailOnAny, true, 0, 0, Pass},
		{FailOnNever, true, 3, 3, Pass},
		{FailOnNever, false, 0, 0, Fail},
	} {
		assert.Check(t, is.Equal(tc.failOn.Decide(tc.ok, tc.unexpected, tc.escapes, 0), tc.want), "%+v", tc)
	}
}
