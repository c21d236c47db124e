package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/harness"
	"sandboxlab/mutants"
	"sandboxlab/report"
	"sandboxlab/verdict"
)

// workflow is what TestWorkflow reads of a GitHub Actions workflow. Not
// KnownFields: GitHub's schema has many keys this test has no use for.
type workflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Needs    any `yaml:"needs"`
		Strategy struct {
			Matrix map[string][]int `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []struct {
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// TestWorkflow reads the mutation workflow and runs its merge job's
// commands here, on shard reports cut as its shard commands cut them:
// the matrix is shards 1 to N, each shard's command names its K/N and
// the times file, the times cut the defects into shards whose loads
// differ by less than the longest defect, and the merge job's commands
// merge the shards, write the step summary and give the gate. The shard
// commands themselves are not run: each is a whole baseline and its
// share of the defects, minutes of work that the full mutation run of
// make test already does.
func TestWorkflow(t *testing.T) {
	root := moduleRoot(t)
	b, err := os.ReadFile(filepath.Join(root, ".github/workflows/mutation.yml"))
	assert.NilError(t, err)
	var wf workflow
	assert.NilError(t, yaml.Unmarshal(b, &wf))
	n, err := strconv.Atoi(wf.Env["SHARDS"])
	assert.NilError(t, err, "env SHARDS")
	shardJob, mergeJob := wf.Jobs["shard"], wf.Jobs["merge"]
	want := make([]int, n)
	for i := range want {
		want[i] = i + 1
	}
	assert.Check(t, is.DeepEqual(shardJob.Strategy.Matrix["shard"], want), "the matrix is not shards 1 to $SHARDS")
	assert.Check(t, is.Equal(mergeJob.Needs, "shard"))

	var shardCmd string
	for _, s := range shardJob.Steps {
		if strings.Contains(s.Run, " mutate ") {
			shardCmd = s.Run
		}
	}
	assert.Assert(t, strings.Contains(shardCmd, "--shard ${{ matrix.shard }}/$SHARDS"), "the shard step: %q", shardCmd)
	shardCmd = strings.ReplaceAll(shardCmd, "${{ matrix.shard }}", "{K}") // one word
	timesFile := flagValue(shardCmd, "--shard-times")
	times, err := harness.ReadShardTimes(filepath.Join(root, timesFile))
	assert.NilError(t, err, "the workflow's times file")
	out := flagValue(shardCmd, ">")
	assert.Assert(t, strings.Contains(out, "{K}"), "each shard writes a report of its own: %q", out)

	// The shards' reports, as the shard commands would write them: the
	// predicted run, cut by the times.
	whole := predictedRun(t)
	var list []mutants.Defect
	for _, d := range whole.Defects {
		md, err := mutants.Lookup(d.ID)
		assert.NilError(t, err)
		list = append(list, md)
	}
	owner := times.Cut(list, n)
	dir := t.TempDir()
	loads := make([]int64, n)
	var longest int64
	for k := 1; k <= n; k++ {
		s := *whole
		s.Run = &report.RunInfo{Shard: fmt.Sprintf("%d/%d", k, n), ShardTimes: times.Digest, Selection: true, Repeat: 1,
			Suites: verdict.Suites, Build: "sha256:build", Predictions: "sha256:predictions"}
		s.Defects = nil
		for i, d := range whole.Defects {
			if owner[i] == k-1 {
				s.Defects = append(s.Defects, d)
				loads[k-1] += times.MS[d.ID]
				longest = max(longest, times.MS[d.ID])
			}
		}
		name := strings.ReplaceAll(out, "{K}", strconv.Itoa(k))
		assert.NilError(t, os.Rename(writeReport(t, &s), filepath.Join(dir, name)))
	}
	assert.Check(t, slices.Max(loads)-slices.Min(loads) <= longest, "the times cut the shards unevenly: %v ms", loads)
	t.Logf("the shards' times in the earlier run: %v ms", loads)

	// The merge job's commands, as written, with the binary built here.
	summary := filepath.Join(dir, "summary.md")
	gate := -1
	for _, s := range mergeJob.Steps {
		if s.Run == "" || strings.HasPrefix(s.Run, "make ") {
			continue
		}
		cmd := exec.Command("/bin/sh", "-c", strings.ReplaceAll(s.Run, "./bin/sandboxlab", bin))
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GITHUB_STEP_SUMMARY="+summary, "SHARDS="+strconv.Itoa(n))
		got, err := cmd.CombinedOutput()
		if s.Name == "Gate" {
			gate = cmd.ProcessState.ExitCode()
			assert.Check(t, is.Contains(string(got), "The gate holds"))
			continue
		}
		assert.NilError(t, err, "step %q: %s", s.Name, got)
	}
	assert.Check(t, is.Equal(gate, 0), "the merge job has no Gate step, or it failed")
	md, err := os.ReadFile(summary)
	assert.NilError(t, err, "the step summary")
	assert.Check(t, is.Contains(string(md), "The gate holds"))
	_, err = os.Stat(filepath.Join(dir, "mutation", "mutate.stryker.json"))
	assert.Check(t, err, "the merged reports")
}

// flagValue is the word after flag in a shell command line.
func flagValue(cmd, flag string) string {
	words := strings.Fields(cmd)
	if i := slices.Index(words, flag); i >= 0 && i+1 < len(words) {
		return words[i+1]
	}
	return ""
}
