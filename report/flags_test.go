package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"
)

// fixtureProfile is a profiles file with one profile, spelled as the
// shipped ones are.
const fixtureProfile = `version: 1
profiles:
  - name: box
    about: a fixture
    command: [bwrap, --new-session, --unshare-net, --ro-bind, /, /,
              --tmpfs, "{home}/.ssh", --]
`

func span(l, c, el, ec int) *SourceSpan {
	return &SourceSpan{StartLine: l, StartColumn: c, EndLine: el, EndColumn: ec}
}

// fixtureFlags is a flag mutation of box: one flag load-bearing, one
// unviable, one made writable that survived masked by another, and that
// other, with the pair that showed it.
func fixtureFlags() *FlagMutation {
	cell := func(a string, st CellState, ev string) SandboxCell {
		return SandboxCell{Attack: a, Sandbox: "box", State: st, Evidence: ev, MS: 100}
	}
	f := &FlagMutation{Identity: Identity{UID: 0, Root: true, ProgramUID: 65534}, Profile: "box", Spec: "box", About: "a fixture",
		Tool: "bwrap", Command: []string{"bwrap", "--new-session", "--unshare-net", "--ro-bind", "/", "/", "--tmpfs", "{home}/.ssh", "--"},
		Source: &ProfileSource{File: "profiles.yaml", Language: "yaml", Text: fixtureProfile, Entry: 3, Command: span(5, 14, 6, 37)},
		Groups: []FlagGroup{
			{Index: 0, Words: []string{"bwrap"}, Kind: "program", Fixed: true, At: span(5, 15, 5, 20)},
			{Index: 1, Words: []string{"--new-session"}, Kind: "lifetime", At: span(5, 22, 5, 35)},
			{Index: 2, Words: []string{"--unshare-net"}, Kind: "namespaces", At: span(5, 37, 5, 50)},
			{Index: 3, Words: []string{"--ro-bind", "/", "/"}, Kind: "read-only", At: span(5, 52, 5, 65)},
			{Index: 4, Words: []string{"--tmpfs", "{home}/.ssh"}, Kind: "flag", At: span(6, 15, 6, 36)},
			{Index: 5, Words: []string{"--"}, Kind: "end", Fixed: true, At: span(6, 38, 6, 40)},
		},
		Ungrouped: []UngroupedWord{},
		Baseline: FlagBaseline{OK: true, Column: Sandbox{Name: "box", Spec: "box", MS: 900},
			Cells: []SandboxCell{cell("exfiltrate", Stopped, "no bytes"), cell("read_ssh_key", Stopped, "not in the output"),
				cell("lingering_child", Escaped, "alive after the run")},
			Stopped: []string{"exfiltrate", "read_ssh_key"}},
		Escapes: map[string]string{"exfiltrate": "the loopback honeypot receives its bytes", "read_ssh_key": "the fake SSH key's content appears in its output",
			"lingering_child": "a child in the run's own session is alive after the run"},
		Run: FlagRun{Repeat: 1, CellRuns: 8, CellRunsUnselected: 15, BaselineCellRuns: 3, Pairs: true, MaxPairs: 66, PairsMS: 700},
		MS:  4200,
	}
	f.Mutants = []FlagMutant{
		{ID: "box:1:--new-session:remove", Groups: []int{1}, Operator: "remove", Description: "remove --new-session", Verdict: Survived,
			Killed: []string{}, Class: Untested, CellRuns: 2, MS: 500},
		{ID: "box:2:--unshare-net:remove", Groups: []int{2}, Operator: "remove", Description: "remove --unshare-net", Verdict: LoadBearing,
			Killed: []string{"exfiltrate"}, Evidence: []SandboxCell{cell("exfiltrate", Escaped, "the honeypot received 12 bytes")}, CellRuns: 2, MS: 600},
		{ID: "box:3:--ro-bind / /:remove", Groups: []int{3}, Operator: "remove", Description: "remove --ro-bind / /", Verdict: Unviable,
			Killed: []string{}, Unviable: "it did not run the harness's probe program: exit status 1: bwrap: execvp /usr/bin/python3: No such file or directory", MS: 300},
		{ID: "box:3:--ro-bind / /:writable", Groups: []int{3}, Operator: "writable", Replacement: "--bind / /", Description: "writable: --ro-bind / / becomes --bind / /",
			Verdict: Survived, Killed: []string{}, Class: Untested, CellRuns: 2, MS: 500},
		{ID: "box:4:--tmpfs {home}/.ssh:remove", Groups: []int{4}, Operator: "remove", Description: "remove --tmpfs {home}/.ssh", Verdict: Survived,
			Killed: []string{}, Class: Masked, With: []string{"box:1:--new-session:remove"}, CellRuns: 2, MS: 500},
	}
	f.Mutants[0].Class, f.Mutants[0].With = Masked, []string{"box:4:--tmpfs {home}/.ssh:remove"}
	f.Pairs = []FlagMutant{
		{ID: "box:1:--new-session:remove+4:--tmpfs {home}/.ssh:remove", Groups: []int{1, 4}, Operator: "remove+remove",
			Description: "remove --new-session; remove --tmpfs {home}/.ssh", Verdict: LoadBearing, Killed: []string{"read_ssh_key"},
			Evidence: []SandboxCell{cell("read_ssh_key", Escaped, "the key is in the output")},
			With:     []string{"box:1:--new-session:remove", "box:4:--tmpfs {home}/.ssh:remove"}, CellRuns: 2, MS: 700},
	}
	return f
}

// TestFlagsFormats pins the flag mutation in every format it has.
func TestFlagsFormats(t *testing.T) {
	f := fixtureFlags()
	assert.Check(t, is.DeepEqual(FormatsOf(f), []Format{Text, Markdown, JSON, JUnit, HTML, Stryker, SARIF}))
	o := Options{Version: "v0.0.0-test", System: fixtureSystem}
	var page bytes.Buffer
	assert.NilError(t, WriteWith(&page, HTML, f, o))
	assert.Check(t, is.Contains(page.String(), "<mutation-test-report-app"))
	assert.Check(t, is.Contains(page.String(), "#4 --tmpfs {home}/.ssh (remove, line 6): survived: masked by #1 --new-session"))
	for _, format := range FormatsOf(f) {
		if format == HTML {
			continue // the component's bundle is a megabyte: the page is checked above
		}
		var b bytes.Buffer
		assert.NilError(t, WriteWith(&b, format, f, o))
		golden.Assert(t, b.String(), "flags."+format.Ext()+".golden")
	}
}

// sarifValidator compiles the vendored SARIF 2.1.0 schema.
func sarifValidator(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(SARIFSchema))
	assert.NilError(t, err)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	assert.NilError(t, c.AddResource("sarif-2.1.0-rtm.5.json", doc))
	s, err := c.Compile("sarif-2.1.0-rtm.5.json")
	assert.NilError(t, err)
	return s
}

// TestSARIFValidAgainstSchema: the flag mutation's SARIF and the
// sandbox matrix's are valid SARIF 2.1.0, and the schema is strict
// enough to refuse a result without a message.
func TestSARIFValidAgainstSchema(t *testing.T) {
	s := sarifValidator(t)
	sb := fixtureSandboxes()
	for i := range sb.Sandboxes {
		if sb.Sandboxes[i].Command != nil {
			sb.Sandboxes[i].Source = &ProfileSource{File: "attacks/backends/profiles.yaml", Entry: 40, Command: span(42, 14, 45, 30)}
		}
	}
	for name, r := range map[string]Report{"flags": fixtureFlags(), "sandboxes": sb} {
		var b bytes.Buffer
		assert.NilError(t, WriteWith(&b, SARIF, r, Options{Version: "v0.0.0-test"}))
		assert.Check(t, validate(t, s, b.Bytes()), name)
	}
	var b bytes.Buffer
	assert.NilError(t, WriteWith(&b, SARIF, fixtureFlags(), Options{}))
	var log map[string]any
	assert.NilError(t, json.Unmarshal(b.Bytes(), &log))
	delete(log["runs"].([]any)[0].(map[string]any)["results"].([]any)[0].(map[string]any), "message")
	bad, _ := json.Marshal(log)
	assert.Check(t, validate(t, s, bad) != nil, "a result without a message passed the schema")
}

// TestSARIFResults: one rule per attack with its class's severity, a
// result per escaped cell at the profile's command and per survived flag
// at the flag, each with a fingerprint that does not follow the line.
func TestSARIFResults(t *testing.T) {
	f := fixtureFlags()
	l := f.SARIF(Options{})
	run := l.Runs[0]
	assert.Check(t, is.Len(run.Tool.Driver.Rules, 4))
	assert.Check(t, is.Equal(run.Tool.Driver.Rules[1].ID, "read_ssh_key"))
	assert.Check(t, is.Equal(run.Tool.Driver.Rules[1].Properties.SecuritySeverity, "8.0"))
	assert.Check(t, is.Len(run.Results, 4))
	esc := run.Results[0]
	assert.Check(t, is.Equal(esc.RuleID, "lingering_child"))
	assert.Check(t, is.Equal(esc.Locations[0].PhysicalLocation.Region.StartLine, 5))
	flag := run.Results[3]
	assert.Check(t, is.Equal(flag.RuleID, SurvivedRule))
	assert.Check(t, is.Equal(flag.Locations[0].PhysicalLocation.Region.StartLine, 6))
	assert.Check(t, is.Equal(flag.Locations[0].PhysicalLocation.Region.StartColumn, 15))
	moved := fixtureFlags()
	moved.Groups[4].At = span(9, 1, 9, 20)
	assert.Check(t, is.DeepEqual(moved.SARIF(Options{}).Runs[0].Results[3].PartialFingerprints, flag.PartialFingerprints))
	renamed := fixtureFlags()
	renamed.Groups[4].Words = []string{"--tmpfs", "/elsewhere"}
	assert.Check(t, renamed.SARIF(Options{}).Runs[0].Results[3].PartialFingerprints["sandboxlabFlag/v1"] != flag.PartialFingerprints["sandboxlabFlag/v1"])
}

// TestFlagsStrykerValid: the flag mutation's Stryker report is valid
// against the pinned schema, its one file the profile's, each mutant at
// its flag.
func TestFlagsStrykerValid(t *testing.T) {
	r := fixtureFlags().Stryker(Options{Version: "v0.0.0-test", System: fixtureSystem})
	b, err := json.Marshal(r)
	assert.NilError(t, err)
	assert.Check(t, validate(t, validator(t), b))
	file := r.Files["profiles.yaml"]
	assert.Assert(t, file != nil)
	assert.Check(t, is.Equal(file.Source, fixtureProfile))
	assert.Check(t, is.Equal(file.Mutants[2].Status, "CompileError"))
	assert.Check(t, is.DeepEqual(file.Mutants[4].Location, StrykerLocation{Start: StrykerPosition{6, 15}, End: StrykerPosition{6, 36}}))
}
