package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"sandboxlab/harness/gosource"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"
)

// fixtureSources are planted sites for the fixtures' defects, on lines
// the tests can name: the real files move with every edit.
func fixtureSources() fstest.MapFS {
	return fstest.MapFS{
		"sandbox/run.go": {Data: []byte(`package sandbox

import "sandboxlab/mutants"

func run() {
	if !mutants.On(mutants.NoNetNS) {
		flags |= netns
	}
	timedOut := stopped && !mutants.On(mutants.TimeoutHidden)
	if mutants.On(mutants.ExitCodeLost) {
		code = 0
	}
	x := "«»"; if !mutants.On(mutants.NoPIDNS) { // a column in UTF-16 units
		flags |= pidns
	}
	if mutants.On(mutants.NoSweep) {
		return
	}
	if mutants.On(mutants.NoPIDNS) {
		return
	}
}
`)},
		"sandbox/files.go":   {Data: []byte("package sandbox\n\nfunc guard() bool { return !mutants.On(mutants.TraversalOK) }\n")},
		"sandbox/init.go":    {Data: []byte("package sandbox\n\nfunc caps() { if !mutants.On(mutants.CapsKept) { drop() } }\n")},
		"sandbox/session.go": {Data: []byte("package sandbox\n\nfunc quota() bool {\n\treturn mutants.On(mutants.QuotaIgnored) || mutants.On(mutants.FreshDirPerRun)\n}\n")},
	}
}

// fixtureSystem is a fixed machine, so the golden file does not follow
// the one the tests run on.
var fixtureSystem = &StrykerSystem{CI: true, OS: &StrykerOS{Platform: "linux", Description: "Debian GNU/Linux 12 (bookworm)", Version: "6.1.0"},
	CPU: &StrykerCPU{LogicalCores: 2, Model: "a test CPU"}, RAM: &StrykerRAM{Total: 24000}}

func strykerOptions() Options {
	return Options{Sources: fixtureSources(), Locate: locateIn(fixtureSources()), Version: "v0.0.0-test", System: fixtureSystem}
}

// locateIn is the harness's locator (harness.SiteSpans) over src, which
// this package's tests cannot import: the harness imports report.
func locateIn(src fs.FS) func(path, id string) ([]SourceSpan, error) {
	return func(path, id string) ([]SourceSpan, error) {
		sites, err := gosource.ReadSites(src, path)
		if err != nil {
			return nil, err
		}
		var out []SourceSpan
		for _, s := range sites.Of(id) {
			out = append(out, SourceSpan{StartLine: s.Start.Line, StartColumn: s.Start.UTF16Column, EndLine: s.End.Line, EndColumn: s.End.UTF16Column})
		}
		return out, nil
	}
}

// validator compiles the pinned schema.
func validator(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(StrykerSchema))
	assert.NilError(t, err)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	assert.NilError(t, c.AddResource("mutation-testing-report-schema.json", doc))
	s, err := c.Compile("mutation-testing-report-schema.json")
	assert.NilError(t, err)
	return s
}

// validate checks a Stryker report, as written, against the schema.
func validate(t *testing.T, s *jsonschema.Schema, data []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	assert.NilError(t, err)
	return s.Validate(v)
}

// TestStrykerValidAgainstSchema: every mutation fixture, with and
// without sources, is valid against the pinned official schema; and the
// validator is not one that passes everything.
func TestStrykerValidAgainstSchema(t *testing.T) {
	s := validator(t)
	for name, m := range map[string]*Mutation{"mutation": fixtureMutation(), "broken": fixtureMutationBroken(),
		"suites": fixtureSuitesMutation(), "suites, hardening broken": fixtureSuitesMutationBroken()} {
		for _, o := range []Options{strykerOptions(), {}} {
			var b bytes.Buffer
			assert.NilError(t, WriteWith(&b, Stryker, m, o))
			assert.Check(t, validate(t, s, b.Bytes()), "%s (sources: %v)", name, o.Sources != nil)
		}
	}
	var b bytes.Buffer
	assert.NilError(t, WriteWith(&b, Stryker, fixtureMutation(), strykerOptions()))
	for _, tamper := range []struct{ from, to, want string }{
		{`"status": "Killed"`, `"status": "Caught"`, "status"},
		{`"schemaVersion": "2"`, `"schemaVersion": "3"`, "schemaVersion"},
		{`"line": 6`, `"line": 0`, "minimum"},
	} {
		bad := bytes.Replace(b.Bytes(), []byte(tamper.from), []byte(tamper.to), 1)
		assert.Assert(t, !bytes.Equal(bad, b.Bytes()), "no %s in the report", tamper.from)
		assert.Check(t, is.ErrorContains(validate(t, s, bad), tamper.want), tamper.from)
	}
}

// TestStrykerGolden pins the report of the fixture with its sources.
func TestStrykerGolden(t *testing.T) {
	var b bytes.Buffer
	assert.NilError(t, WriteWith(&b, Stryker, fixtureMutation(), strykerOptions()))
	golden.Assert(t, b.String(), "mutation.stryker.json.golden")
}

// TestStrykerMutants: each defect is one mutant at its first planted
// site, at its real line and column (columns in UTF-16 units), with the
// status its run gives and the probes that killed and covered it.
func TestStrykerMutants(t *testing.T) {
	r := fixtureMutation().Stryker(strykerOptions())
	byID := map[string]StrykerMutant{}
	for path, f := range r.Files {
		assert.Check(t, is.Equal(f.Language, "go"), path)
		src, err := fixtureSources().ReadFile(path)
		assert.NilError(t, err)
		assert.Check(t, is.Equal(f.Source, string(src)), "the full source of %s", path)
		for _, mu := range f.Mutants {
			byID[mu.ID] = mu
		}
	}
	assert.Check(t, is.Len(byID, 9))

	at := func(line, col, endCol int) StrykerLocation {
		return StrykerLocation{Start: StrykerPosition{line, col}, End: StrykerPosition{line, endCol}}
	}
	noNet := byID["no_net_ns"]
	assert.Check(t, is.DeepEqual(noNet.Location, at(6, 6, 33)), "if !mutants.On(mutants.NoNetNS) {")
	assert.Check(t, is.Equal(noNet.MutatorName, "no_net_ns"))
	assert.Check(t, is.Equal(noNet.Replacement, "true"))
	assert.Check(t, is.Equal(noNet.Status, StatusKilled))
	assert.Check(t, is.DeepEqual(noNet.KilledBy, []string{"no_network", "exfiltrate@L4", "exfiltrate@L5"}))
	assert.Check(t, is.Len(noNet.CoveredBy, 4+96), "every check and cell of the course's baseline")
	assert.Check(t, is.Contains(noNet.Description, "no network namespace"))

	pid := byID["no_pid_ns"]
	assert.Check(t, is.DeepEqual(pid.Location, at(13, 17, 44)), "« and » are one unit each, two bytes each")
	assert.Check(t, is.Contains(pid.Description, "(also planted at line 19)"))
	assert.Check(t, is.DeepEqual(byID["timeout_hidden"].Location, at(9, 26, 59)))

	trav := byID["traversal_ok"]
	assert.Check(t, is.Equal(trav.Status, StatusSurvived), "a known equivalent mutant stays Survived")
	assert.Check(t, is.Contains(trav.StatusReason, "known escaped: equivalent mutant"))
	assert.Check(t, is.Len(trav.KilledBy, 0))
	assert.Check(t, is.Equal(byID["quota_ignored"].Status, StatusSurvived))
	assert.Check(t, is.Contains(byID["quota_ignored"].StatusReason, "UNEXPECTED"))
	assert.Check(t, is.Equal(byID["fresh_dir_per_run"].Status, StatusTimeout))
	assert.Check(t, is.DeepEqual(byID["fresh_dir_per_run"].Location, at(4, 45, 79)))

	// The probes are the tests, each in its file.
	assert.Check(t, is.DeepEqual(r.TestFiles["checks/timeout_flag.go"].Tests, []StrykerTest{{ID: "timeout_flag", Name: "timeout_flag: a stopped run says so (TimedOut), a finished one does not"}}))
	assert.Check(t, is.Len(r.TestFiles["attacks/exfiltrate.go"].Tests, 6))
	assert.Check(t, is.Equal(r.Framework.Name, "sandboxlab"))
	assert.Check(t, is.Equal(r.Thresholds, StrykerThresholds{High: 80, Low: 60}))
}

// TestStrykerWithoutSources: with no sources the report is still valid,
// and each mutant says that its line is unknown instead of pointing at
// a line nobody can see.
func TestStrykerWithoutSources(t *testing.T) {
	r := fixtureMutation().Stryker(Options{})
	f := r.Files["sandbox/run.go"]
	assert.Assert(t, f != nil)
	assert.Check(t, is.Contains(f.Source, "was not available"))
	for _, mu := range f.Mutants {
		assert.Check(t, is.Equal(mu.Location.Start.Line, 1), mu.ID)
		assert.Check(t, is.Contains(mu.Description, "the site's line is unknown"), mu.ID)
	}

	// The sources without a locator: the file is shown, its sites are not
	// placed. A locator's error is the file's.
	o := strykerOptions()
	o.Locate = nil
	f = fixtureMutation().Stryker(o).Files["sandbox/run.go"]
	assert.Check(t, is.Contains(f.Source, "func run()"))
	for _, mu := range f.Mutants {
		assert.Check(t, is.Equal(mu.Location.Start.Line, 1), mu.ID)
		assert.Check(t, is.Contains(mu.Description, "no site locator was given"), mu.ID)
	}
	o.Locate = func(path, id string) ([]SourceSpan, error) { return nil, errors.New("parsing " + path + ": broken") }
	f = fixtureMutation().Stryker(o).Files["sandbox/run.go"]
	for _, mu := range f.Mutants {
		assert.Check(t, is.Contains(mu.Description, "the site's line is unknown: parsing sandbox/run.go: broken"), mu.ID)
	}
}

// TestMutantStatus pins the mapping of a run to Stryker's words.
func TestMutantStatus(t *testing.T) {
	probes := []string{"c1", "a@L1"}
	for _, tc := range []struct {
		d      Defect
		status string
		killed []string
	}{
		{Defect{Outcome: "exact", FailedChecks: []string{"c1"}}, StatusKilled, []string{"c1"}},
		{Defect{Outcome: "escaped", EscapedAttacks: []string{"a@L1"}}, StatusKilled, []string{"a@L1"}},
		{Defect{Outcome: "escaped"}, StatusSurvived, nil},
		{Defect{Outcome: "hung"}, StatusTimeout, nil},
		{Defect{Outcome: "error", Error: "worker crashed"}, StatusRuntimeError, nil},
	} {
		status, killed, covered, reason := MutantStatus(tc.d, probes)
		assert.Check(t, is.Equal(status, tc.status), "%+v", tc.d)
		assert.Check(t, is.DeepEqual(killed, tc.killed), "%+v", tc.d)
		assert.Check(t, is.DeepEqual(covered, probes), "%+v", tc.d)
		assert.Check(t, strings.HasPrefix(reason, "outcome "+string(tc.d.Outcome)), reason)
	}
	status, _, _, _ := MutantStatus(Defect{Outcome: "escaped"}, nil)
	assert.Check(t, is.Equal(status, StatusNoCoverage), "no probe ran")
}

// TestStrykerJSONShape: the keys the schema and the component read.
func TestStrykerJSONShape(t *testing.T) {
	var b bytes.Buffer
	assert.NilError(t, WriteWith(&b, Stryker, fixtureMutation(), strykerOptions()))
	var v map[string]any
	assert.NilError(t, json.Unmarshal(b.Bytes(), &v))
	for _, k := range []string{"schemaVersion", "thresholds", "files", "testFiles", "framework", "system", "performance"} {
		_, ok := v[k]
		assert.Check(t, ok, "missing %q", k)
	}
}
