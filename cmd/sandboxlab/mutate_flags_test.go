package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/icmd"

	"sandboxlab/report"
	"sandboxlab/verdict"
)

// TestMutateSandboxUsage: mutate --sandbox refuses what it has no use
// for, and names what is wrong, before anything runs.
func TestMutateSandboxUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"mutate", "--sandbox", "sandboxlab:L5"}, "mutated by their planted defects"},
		{[]string{"mutate", "--sandbox", "nope"}, "unknown sandbox"},
		{[]string{"mutate", "--sandbox", "bubblewrap", "--masking"}, "--sandbox and --masking"},
		{[]string{"mutate", "--sandbox", "bubblewrap", "--pairs", "--shard", "1/2"}, "--pairs and --shard"},
		{[]string{"mutate", "--sandbox", "bubblewrap", "--only", "nope"}, "unknown attack"},
		{[]string{"mutate", "--pairs"}, "--pairs goes with --sandbox"},
		{[]string{"mutate", "--format", "sarif"}, "--format sarif goes with --sandbox"},
		{[]string{"attack", "--format", "sarif"}, "--format sarif goes with --sandbox"},
	} {
		res := run(t, nil, c.args...)
		res.Assert(t, icmd.Expected{ExitCode: verdict.ExitInternal})
		assert.Check(t, is.Contains(res.Stderr(), c.err), "%v", c.args)
	}
}

// flagShardFile writes shard k/2 of a made-up flag mutation of two
// mutants, one survived, and returns its path.
func flagShardFile(t *testing.T, dir string, k int) string {
	t.Helper()
	f := report.FlagMutation{Profile: "box", Spec: "box", Tool: "bwrap", Command: []string{"bwrap", "--unshare-net", "--new-session", "--"},
		Source: &report.ProfileSource{File: "mine.yaml", Language: "yaml", Text: "version: 1\n", Entry: 1},
		Groups: []report.FlagGroup{{Index: 0, Words: []string{"bwrap"}, Kind: "program", Fixed: true},
			{Index: 1, Words: []string{"--unshare-net"}, Kind: "namespaces", At: &report.SourceSpan{StartLine: 4, StartColumn: 3, EndLine: 4, EndColumn: 16}},
			{Index: 2, Words: []string{"--new-session"}, Kind: "lifetime", At: &report.SourceSpan{StartLine: 5, StartColumn: 3, EndLine: 5, EndColumn: 16}}},
		Baseline: report.FlagBaseline{OK: true, Stopped: []string{"exfiltrate"},
			Cells: []report.SandboxCell{{Attack: "exfiltrate", Sandbox: "box", State: report.Stopped}}},
		Run: report.FlagRun{Shard: fmt.Sprintf("%d/2", k), Repeat: 1, Build: "b", CellRuns: 1, CellRunsUnselected: 1}}
	if k == 1 {
		f.Mutants = []report.FlagMutant{{ID: "box:1:--unshare-net:remove", Groups: []int{1}, Operator: "remove", Verdict: report.LoadBearing, Killed: []string{"exfiltrate"}}}
	} else {
		f.Mutants = []report.FlagMutant{{ID: "box:2:--new-session:remove", Groups: []int{2}, Operator: "remove", Verdict: report.Survived, Killed: []string{}}}
	}
	b, err := json.Marshal(f)
	assert.NilError(t, err)
	path := filepath.Join(dir, fmt.Sprintf("shard-%d.json", k))
	assert.NilError(t, os.WriteFile(path, b, 0o644))
	return path
}

// TestMergeFlagShards: 'mutate merge' merges the shards of mutate
// --sandbox into SARIF with the survivor at its flag's line, and under
// GitHub Actions appends the per-flag table to the step summary.
func TestMergeFlagShards(t *testing.T) {
	dir := t.TempDir()
	summary := filepath.Join(dir, "summary.md")
	res := run(t, []string{"GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY=" + summary},
		"mutate", "merge", "--format", "sarif", "--out", filepath.Join(dir, "out"), flagShardFile(t, dir, 2), flagShardFile(t, dir, 1))
	res.Assert(t, icmd.Success)
	assert.Check(t, validSARIF(t, res.Stdout()))
	var log report.SARIFLog
	assert.NilError(t, json.Unmarshal([]byte(res.Stdout()), &log))
	results := log.Runs[0].Results
	assert.Assert(t, is.Len(results, 1))
	assert.Check(t, is.Equal(results[0].RuleID, report.SurvivedRule))
	assert.Check(t, is.Equal(results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI, "mine.yaml"))
	assert.Check(t, is.Equal(results[0].Locations[0].PhysicalLocation.Region.StartLine, 5))
	b, err := os.ReadFile(summary)
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(b), "| 1 | --unshare-net | 4    | remove   | load-bearing"))
	_, err = os.Stat(filepath.Join(dir, "out", "flags-box.sarif"))
	assert.Check(t, err)
	run(t, nil, "mutate", "merge", flagShardFile(t, dir, 1)).Assert(t, icmd.Expected{ExitCode: verdict.ExitInternal, Err: "missing shards: 2/2"})
}

// TestAttackSandboxSARIF: attack --sandbox --format sarif gives a result
// for an escape under a custom prefix, located at the prefix (a file of
// its own), its rule carrying the attack's class's severity.
func TestAttackSandboxSARIF(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	res := run(t, nil, "attack", "--sandbox", "custom:env --", "--only", "env_secrets", "--format", "sarif")
	res.Assert(t, icmd.Success)
	assert.Check(t, validSARIF(t, res.Stdout()))
	var log report.SARIFLog
	assert.NilError(t, json.Unmarshal([]byte(res.Stdout()), &log))
	r := log.Runs[0]
	assert.Assert(t, is.Len(r.Results, 1), res.Stdout())
	assert.Check(t, is.Equal(r.Results[0].RuleID, "env_secrets"))
	assert.Check(t, is.Equal(r.Results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI, "custom-prefix.sh"))
	assert.Check(t, is.DeepEqual(r.Results[0].Locations[0].PhysicalLocation.Region, &report.SARIFRegion{StartLine: 1, StartColumn: 1, EndLine: 1, EndColumn: 7}))
	assert.Check(t, is.Equal(r.Tool.Driver.Rules[0].Properties.SecuritySeverity, "8.0"))
}

// validSARIF checks a SARIF file, as written, against the vendored
// SARIF 2.1.0 schema.
func validSARIF(t *testing.T, data string) error {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(report.SARIFSchema))
	assert.NilError(t, err)
	c := jsonschema.NewCompiler()
	assert.NilError(t, c.AddResource("sarif.json", doc))
	s, err := c.Compile("sarif.json")
	assert.NilError(t, err)
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(data))
	assert.NilError(t, err)
	return s.Validate(v)
}
