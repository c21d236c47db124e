package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/mutants"
	"sandboxlab/report"
	"sandboxlab/report/verdict"
)

// result builds a worker's report: the checks that failed and the cells
// that escaped.
func result(failed []string, escaped ...string) *WorkerResult {
	r := &WorkerResult{Checks: &report.Checks{}, Attacks: &report.Attacks{FirstStopped: map[string]int{"runaway_loop": 1, "file_api_symlink": 0}}}
	for _, c := range universe.Checks {
		r.Checks.Checks = append(r.Checks.Checks, report.Check{ID: c, Passed: !contains(failed, c)})
	}
	r.Checks.Tally()
	r.Attacks.Cells = append(r.Attacks.Cells, report.Cell{Attack: "runaway_loop", Level: 0, Escaped: true})
	for _, e := range escaped {
		c, _, _ := levelCell(e)
		l, _ := c.Level()
		r.Attacks.Cells = append(r.Attacks.Cells, report.Cell{Attack: c.Attack, Level: l, Escaped: true})
	}
	return r
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func predictions(t *testing.T, edit map[mutants.ID]string) *Predictions {
	p, err := ParsePredictions([]byte(valid(edit)), universe)
	assert.NilError(t, err)
	return p
}

func TestJudge(t *testing.T) {
	p := predictions(t, map[mutants.ID]string{
		mutants.TraversalOK:   "  - id: traversal_ok\n    summary: s\n    checks: [file_links]\n    attacks: []\n    known: {outcome: escaped, why: equivalent}\n",
		mutants.LinksFollowed: "  - id: links_followed\n    summary: s\n    checks: [file_links]\n    attacks: [file_api_symlink@L0]\n",
		mutants.NoPIDNS:       "  - id: no_pid_ns\n    summary: s\n    checks: [wall_timeout]\n    attacks: [runaway_loop@L3]\n    known: {attacks: [runaway_loop@L3], why: stopped anyway}\n",
	})
	r := &Runner{Predictions: p}
	base := result(nil)
	judge := func(id mutants.ID, w *WorkerResult) report.Defect {
		d, _ := mutants.Lookup(string(id))
		return r.judge(d, workResult{result: w}, nil, base)
	}
	cases := []struct {
		name    string
		got     report.Defect
		outcome verdict.Outcome
		escape  bool
		says    string
	}{
		{"exact", judge(mutants.FailOpen, result([]string{"wall_timeout"})), verdict.Exact, false, ""},
		{"extra", judge(mutants.FailOpen, result([]string{"wall_timeout", "file_links"})), verdict.Extra, false, "extra: predicted wall_timeout, failed wall_timeout, file_links"},
		{"escaped", judge(mutants.FailOpen, result(nil)), verdict.Escaped, true, "escaped"},
		{"known escape", judge(mutants.TraversalOK, result(nil)), verdict.Escaped, false, ""},
		{"known escape caught after all", judge(mutants.TraversalOK, result([]string{"file_links"})), verdict.Exact, false, "the known escaped divergence did not happen"},
		{"predicted cell", judge(mutants.LinksFollowed, result([]string{"file_links"}, "file_api_symlink@L0")), verdict.Exact, false, ""},
		{"cell stopped", judge(mutants.LinksFollowed, result([]string{"file_links"})), verdict.Exact, false, "file_api_symlink@L0 was predicted to escape but was stopped"},
		{"cell not predicted", judge(mutants.FailOpen, result([]string{"wall_timeout"}, "file_api_symlink@L3")), verdict.Exact, true, "file_api_symlink@L3 escaped, not predicted"},
		{"known cell", judge(mutants.NoPIDNS, result([]string{"wall_timeout"})), verdict.Exact, false, ""},
		{"escape in the baseline is not new", judge(mutants.FailOpen, result([]string{"wall_timeout"}, "runaway_loop@L0")), verdict.Exact, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Check(t, is.Equal(c.got.Outcome, c.outcome))
			assert.Check(t, is.Equal(c.got.UnexpectedEscape, c.escape))
			if c.says == "" {
				assert.Check(t, is.Len(c.got.Unexpected, 0))
			} else {
				assert.Check(t, is.Contains(strings.Join(c.got.Unexpected, "; "), c.says))
			}
		})
	}
}

// fakeWorkers writes one canned result per defect and returns a Worker
// that prints it with cat (or sleeps, for the ids in hang).
func fakeWorkers(t *testing.T, results map[string]*WorkerResult, hang ...string) func(context.Context, string) *exec.Cmd {
	dir := t.TempDir()
	for id, r := range results {
		b, err := json.Marshal(r)
		assert.NilError(t, err)
		assert.NilError(t, os.WriteFile(filepath.Join(dir, id+".json"), b, 0o644))
	}
	return func(ctx context.Context, defect string) *exec.Cmd {
		if contains(hang, defect) {
			return exec.CommandContext(ctx, "sleep", "60")
		}
		return exec.CommandContext(ctx, "cat", filepath.Join(dir, defect+".json"))
	}
}

func TestRunnerGateAndExitCodes(t *testing.T) {
	p := predictions(t, nil)
	ok := result([]string{"wall_timeout"})
	results := map[string]*WorkerResult{"": result(nil)}
	for _, d := range mutants.All {
		results[string(d.ID)] = ok
	}
	run := func(failOn verdict.FailOn, hang ...string) *report.Mutation {
		r := &Runner{Worker: fakeWorkers(t, results, hang...), Predictions: p, Jobs: 4, Timeout: 2 * time.Second, FailOn: failOn}
		m, err := r.Run(context.Background())
		assert.NilError(t, err)
		return m
	}

	m := run(verdict.FailOnEscape)
	assert.Check(t, is.Equal(m.Gate, verdict.Pass))
	assert.Check(t, is.Equal(ExitCode(m), 0))
	assert.Check(t, is.Equal(m.Summary.Exact, 29))
	assert.Check(t, is.Equal(m.Defects[0].ID, string(mutants.All[0].ID)), "defects come back in registry order")

	results[string(mutants.CapsKept)] = result(nil) // escapes, unpredicted
	results[string(mutants.NoNetNS)] = result([]string{"wall_timeout", "file_links"})
	m = run(verdict.FailOnEscape)
	assert.Check(t, is.Equal(ExitCode(m), 2))
	assert.Check(t, is.Equal(m.Summary.Escaped, 1))
	assert.Check(t, is.Equal(m.Summary.Unexpected, 2))
	assert.Check(t, is.Equal(ExitCode(run(verdict.FailOnNever)), 0))

	results[string(mutants.CapsKept)] = ok
	assert.Check(t, is.Equal(ExitCode(run(verdict.FailOnEscape)), 0), "an extra failure is not an escape")
	assert.Check(t, is.Equal(ExitCode(run(verdict.FailOnAny)), 3))

	m = run(verdict.FailOnEscape, string(mutants.NoSweep))
	d := m.Defects[indexOf(mutants.NoSweep)]
	assert.Check(t, is.Equal(d.Outcome, verdict.Hung))
	assert.Check(t, is.Contains(d.Error, "no verdict within 2s"))
	assert.Check(t, is.Equal(ExitCode(m), 2), "a hung defect was never shown caught")

	results[""] = result([]string{"file_links"})
	m = run(verdict.FailOnEscape)
	assert.Check(t, !m.Baseline.OK)
	assert.Check(t, is.Len(m.Defects, 0), "no defect runs on a broken baseline")
	assert.Check(t, is.Contains(strings.Join(m.Baseline.Problems, "; "), "check file_links fails on the correct sandbox"))
	assert.Check(t, is.Equal(ExitCode(m), 4))
}

func indexOf(id mutants.ID) int {
	for i, d := range mutants.All {
		if d.ID == id {
			return i
		}
	}
	panic(fmt.Sprint("no defect ", id))
}

// TestRejudge reads a run back from its JSON and judges its facts again:
// unchanged predictions give the same verdicts; edited ones give the
// gate's answer to the edit without running anything.
func TestRejudge(t *testing.T) {
	results := map[string]*WorkerResult{"": result(nil)}
	for _, d := range mutants.All {
		results[string(d.ID)] = result([]string{"wall_timeout"})
	}
	results[string(mutants.TraversalOK)] = result(nil)
	known := map[mutants.ID]string{mutants.TraversalOK: "  - id: traversal_ok\n    summary: s\n    checks: [file_links]\n    attacks: []\n    known: {outcome: escaped, why: equivalent}\n"}
	r := &Runner{Worker: fakeWorkers(t, results), Predictions: predictions(t, known), Jobs: 4, Timeout: 5 * time.Second, FailOn: verdict.FailOnEscape}
	m, err := r.Run(context.Background())
	assert.NilError(t, err)
	b, err := json.Marshal(m)
	assert.NilError(t, err)
	var back report.Mutation
	assert.NilError(t, json.Unmarshal(b, &back))

	same, err := Rejudge(&back, predictions(t, known), verdict.FailOnEscape)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(same.Summary, m.Summary))
	assert.Check(t, is.Equal(ExitCode(same), 0))

	// Without its known entry the equivalent mutant is an unexpected escape.
	unknown, err := Rejudge(&back, predictions(t, nil), verdict.FailOnEscape)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(ExitCode(unknown), 2))
	assert.Check(t, unknown.Defects[indexOf(mutants.TraversalOK)].UnexpectedEscape)

	// Predicting that a caught defect escapes is a divergence.
	escape := map[mutants.ID]string{mutants.FailOpen: "  - id: fail_open\n    summary: s\n    checks: []\n    attacks: []\n"}
	for id, e := range known {
		escape[id] = e
	}
	wrong, err := Rejudge(&back, predictions(t, escape), verdict.FailOnAny)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(ExitCode(wrong), 3))
	assert.Check(t, is.Contains(strings.Join(wrong.Defects[indexOf(mutants.FailOpen)].Unexpected, ";"), "extra: predicted none, failed wall_timeout"))
}

// TestRunnerInterruptLeavesNothing: cancelling a run stops its workers
// promptly and leaves no worker, temporary directory or control group.
func TestRunnerInterruptLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	results := map[string]*WorkerResult{"": result(nil)}
	tag := fmt.Sprintf("sandboxlab-runner-test-%d", os.Getpid())
	worker := func(ctx context.Context, defect string) *exec.Cmd {
		if defect == "" {
			return fakeWorkers(t, results)(ctx, "")
		}
		// A worker that leaves a grandchild behind in a session of its own.
		return exec.CommandContext(ctx, "sh", "-c", "setsid sleep 60 "+tag+" & sleep 60", "worker")
	}
	r := &Runner{Worker: worker, Predictions: predictions(t, nil), Jobs: 3, Timeout: time.Minute, FailOn: verdict.FailOnEscape}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(2*time.Second, cancel)
	start := time.Now()
	_, err := r.Run(ctx)
	assert.Check(t, is.ErrorIs(err, context.Canceled))
	assert.Check(t, time.Since(start) < 20*time.Second, "the run took %v to stop", time.Since(start))
	left, _ := filepath.Glob(filepath.Join(tmp, "sandboxlab-mutant-*"))
	assert.Check(t, is.Len(left, 0), "temporary directories left")
	jails, _ := filepath.Glob(filepath.Join(pidsHierarchy, fmt.Sprintf("sandboxlab-%d-*", os.Getpid())))
	assert.Check(t, is.Len(jails, 0), "control groups left")
	out, _ := exec.Command("pgrep", "-f", tag).Output()
	if newJail("probe").dir == "" {
		// Without the control group only tagged programs are swept, and
		// this grandchild carries no tag.
		exec.Command("pkill", "-f", tag).Run()
		t.Skipf("no pids control group here (not root?): an untagged grandchild is not swept")
	}
	os.Remove(filepath.Join(pidsHierarchy, "sandboxlab-probe"))
	assert.Check(t, is.Equal(strings.TrimSpace(string(out)), ""), "a worker's grandchild survived")
}
