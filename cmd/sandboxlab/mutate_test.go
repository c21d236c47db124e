package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/icmd"

	"sandboxlab/harness/gosource"
	"sandboxlab/harness/harnesstest"
	"sandboxlab/report"
	"sandboxlab/verdict"
)

// The mutation runs themselves are tested in harness (TestMutate and its
// kin). These tests pin what the CLI adds to them, on reports made
// without running anything: flags, exit codes, formats and the CI
// annotations.

// TestMutateReplay: --replay judges a report's facts against the
// predictions given and exits with the gate's code; --fail-on sets the
// policy; under GitHub Actions each unexpected escape is an annotation at
// its planted site, on stderr.
func TestMutateReplay(t *testing.T) {
	facts := predictedRun(t)
	perfect := writeReport(t, facts)
	run(t, nil, "mutate", "--replay", perfect).Assert(t, icmd.Expected{ExitCode: 0, Out: "The gate holds"})
	// The known divergences (traversal_ok's escape and the others) did
	// not happen: under --fail-on any that is a divergence.
	res := run(t, nil, "mutate", "--replay", perfect, "--fail-on", "any", "--format", "json")
	res.Assert(t, icmd.Expected{ExitCode: verdict.ExitDivergence})
	var m report.Mutation
	assert.NilError(t, json.Unmarshal([]byte(res.Stdout()), &m))
	assert.Check(t, is.Equal(m.FailOn, verdict.FailOnAny))

	escaped := *facts
	escaped.Defects = slices.Clone(facts.Defects)
	i := slices.IndexFunc(escaped.Defects, func(d report.Defect) bool { return d.ID == "fail_open" })
	assert.Assert(t, i >= 0)
	escaped.Defects[i].FailedChecks = []string{}
	res = run(t, []string{"GITHUB_ACTIONS=true"}, "mutate", "--replay", writeReport(t, &escaped))
	res.Assert(t, icmd.Expected{ExitCode: verdict.ExitEscape, Out: "The gate fails"})
	site := escaped.Defects[i].Site
	sites, err := gosource.Locate(os.DirFS(moduleRoot(t)), site, "fail_open")
	assert.NilError(t, err)
	line := sites[0].Start.Line
	assert.Check(t, is.Contains(res.Stderr(), fmt.Sprintf("::error file=%s,line=%d,title=unexpected escape%%3A fail_open::", site, line)))
	res = run(t, nil, "mutate", "--replay", writeReport(t, &escaped))
	assert.Check(t, !strings.Contains(res.Stderr(), "::error"), "annotations outside GitHub Actions")
	run(t, nil, "mutate", "--replay", writeReport(t, &escaped), "--fail-on", "never").Assert(t, icmd.Success)
}

// TestMutatePredictionsFlag: a misspelt check id in --predictions is a
// usage error that names its line, before anything runs.
func TestMutatePredictionsFlag(t *testing.T) {
	preds, err := os.ReadFile(filepath.Join(moduleRoot(t), "predictions.yaml"))
	assert.NilError(t, err)
	typo := strings.Replace(string(preds), "checks: [no_network]", "checks: [no_netwrok]", 1)
	line := 1 + strings.Count(typo[:strings.Index(typo, "no_netwrok")], "\n")
	file := filepath.Join(t.TempDir(), "predictions.yaml")
	assert.NilError(t, os.WriteFile(file, []byte(typo), 0o644))
	res := run(t, nil, "mutate", "--predictions", file)
	res.Assert(t, icmd.Expected{ExitCode: 1, Err: fmt.Sprintf(`line %d: no_net_ns: unknown check "no_netwrok"`, line)})
	assert.Check(t, is.Contains(res.Stderr(), "sandboxlab mutate: "+file+": "))
}

// TestMutateMerge: the shards' reports merge into the report of the whole
// run, in every format mutate has (the page and Stryker's JSON
// included), on stdout and into --out.
func TestMutateMerge(t *testing.T) {
	whole := predictedRun(t)
	var shards []string
	for k := 1; k <= 2; k++ {
		s := *whole
		s.Run = &report.RunInfo{Shard: fmt.Sprintf("%d/2", k), Selection: true, Repeat: 1, Suites: verdict.Suites,
			Build: "sha256:build", Predictions: "sha256:predictions"}
		s.Defects = nil
		for i, d := range whole.Defects {
			if i%2 == k-1 {
				s.Defects = append(s.Defects, d)
			}
		}
		shards = append(shards, writeReport(t, &s))
	}
	dir := t.TempDir()
	res := run(t, nil, append([]string{"mutate", "merge", "--format", "json", "--out", dir}, shards...)...)
	res.Assert(t, icmd.Success)
	var m report.Mutation
	assert.NilError(t, json.Unmarshal([]byte(res.Stdout()), &m))
	assert.Check(t, is.Len(m.Defects, len(whole.Defects)))
	assert.Check(t, is.DeepEqual(m.Summary, whole.Summary))
	for _, f := range report.FormatsOf(&report.Mutation{}) {
		_, err := os.Stat(filepath.Join(dir, "mutate."+f.Ext()))
		assert.Check(t, err, f)
	}

	page := run(t, nil, append([]string{"mutate", "merge", "--format", "html"}, shards...)...)
	page.Assert(t, icmd.Success)
	assert.Check(t, is.Contains(page.Stdout(), "<mutation-test-report-app"))
	stryker := run(t, nil, append([]string{"mutate", "merge", "--format", "stryker"}, shards...)...)
	stryker.Assert(t, icmd.Success)
	var sr report.StrykerReport
	assert.NilError(t, json.Unmarshal([]byte(stryker.Stdout()), &sr))
	mutants := 0
	for _, f := range sr.Files {
		mutants += len(f.Mutants)
	}
	assert.Check(t, is.Equal(mutants, len(whole.Defects)))

	run(t, nil, "mutate", "merge", shards[0]).Assert(t, icmd.Expected{ExitCode: 1, Err: "missing shards: 2/2"})
	run(t, nil, "mutate", "merge").Assert(t, icmd.Expected{ExitCode: 1, Err: "name the shards' JSON reports"})
}

// predictedRun is harnesstest.PredictedRun, or the test's end.
func predictedRun(t *testing.T) *report.Mutation {
	t.Helper()
	m, err := harnesstest.PredictedRun()
	assert.NilError(t, err)
	return m
}

// writeReport writes m as a mutate report in JSON and returns its path.
func writeReport(t *testing.T, m *report.Mutation) string {
	t.Helper()
	b, err := json.Marshal(m)
	assert.NilError(t, err)
	f, err := os.CreateTemp(t.TempDir(), "mutate-*.json")
	assert.NilError(t, err)
	_, err = f.Write(b)
	assert.NilError(t, err)
	assert.NilError(t, f.Close())
	return f.Name()
}

// TestMutateIncrementalFlags: the modes that run less than everything
// refuse what they cannot do, before anything runs.
func TestMutateIncrementalFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "last.json")
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"--force"}, "--force goes with --incremental FILE"},
		{[]string{"--incremental", file, "--since", "main"}, "--incremental and --since: choose one"},
		{[]string{"--incremental", file, "--masking"}, "--incremental and --masking"},
		{[]string{"--incremental", file, "--shard", "1/2"}, "--incremental with --shard needs --out DIR"},
		{[]string{"--since", "main", "--shard", "1/2"}, "--since and --shard: choose one"},
		{[]string{"--replay", file, "--incremental", file}, "--replay judges the earlier run as it was"},
		{[]string{"--replay", file, "--since", "main"}, "--replay judges the earlier run as it was"},
	} {
		run(t, nil, append([]string{"mutate"}, c.args...)...).Assert(t, icmd.Expected{ExitCode: 1, Err: c.err})
	}
	_, err := os.Stat(file)
	assert.Check(t, os.IsNotExist(err), "nothing was written")
}
