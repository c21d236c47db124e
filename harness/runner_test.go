package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/mutants"
	"sandboxlab/report"
	"sandboxlab/report/reporttest"
	"sandboxlab/verdict"
)

// result builds a worker's report: the checks that failed and the cells
// that escaped, besides runaway_loop@L0, which the correct sandbox lets
// through.
func result(failed []string, escaped ...string) *WorkerResult {
	r := &WorkerResult{Checks: &report.Checks{}, Attacks: &report.Attacks{Attacks: universe.Attacks, Levels: []int{0, 1, 2, 3, 4, 5}}}
	for _, c := range universe.Checks {
		r.Checks.Checks = append(r.Checks.Checks, report.Check{ID: c, Passed: !contains(failed, c)})
	}
	r.Checks.Tally()
	first := map[string]int{"runaway_loop": 1, "file_api_symlink": 0}
	for _, a := range universe.Attacks {
		for _, l := range r.Attacks.Levels {
			c := report.Cell{Attack: a, Level: l, Escaped: l < first[a] || contains(escaped, verdict.AtLevel(a, l).String())}
			r.Attacks.Cells = append(r.Attacks.Cells, c)
		}
	}
	r.Attacks.Summarize()
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

// TestJudgeNotApplicable: a predicted cell the host cannot give a meaning
// is left out of the comparison and named; a defect the host cannot test
// is untestable, neither caught nor escaped, and the gate does not count
// it; the baseline does not compare an attack none of whose cells applies.
func TestJudgeNotApplicable(t *testing.T) {
	p := predictions(t, map[mutants.ID]string{
		mutants.LinksFollowed: "  - id: links_followed\n    summary: s\n    checks: [file_links]\n    attacks: [file_api_symlink@L0]\n",
	})
	r := &Runner{Predictions: p}
	na := func(w *WorkerResult) *WorkerResult {
		for i, c := range w.Attacks.Cells {
			if c.Attack == "file_api_symlink" {
				w.Attacks.Cells[i].Escaped, w.Attacks.Cells[i].NA = false, "no such kernel here"
			}
		}
		w.Attacks.Summarize()
		return w
	}
	base := na(result(nil))
	assert.Check(t, is.Equal(base.Attacks.NotApplicable["file_api_symlink"], "no such kernel here"))
	d, _ := mutants.Lookup(string(mutants.LinksFollowed))
	got := r.judge(d, workResult{result: na(result([]string{"file_links"}))}, nil, base)
	assert.Check(t, is.Equal(got.Outcome, verdict.Exact))
	assert.Check(t, is.Len(got.Unexpected, 0), "%v", got.Unexpected)
	assert.Check(t, is.DeepEqual(got.NotApplicable, []string{"file_api_symlink@L0"}))

	b, problems := judgeBaselineReports(p, []verdict.Suite{verdict.Course}, base.Checks, base.Attacks, 0)
	assert.Check(t, b.OK, "%v", b.Problems)
	assert.Check(t, is.Len(problems[verdict.Course], 0))

	u := judgeFacts(p, d, facts{untestable: "no such kernel here"})
	assert.Check(t, is.Equal(u.Outcome, verdict.Untestable))
	assert.Check(t, !u.Caught() && !u.UnexpectedEscape && len(u.Unexpected) == 0)
	m := &report.Mutation{Defects: []report.Defect{u, got}}
	m.Tally()
	assert.Check(t, is.DeepEqual(m.Summary, report.Summary{Defects: 1, Caught: 1, Exact: 1, Untestable: 1}))
}

// TestJudgeSeen: a defect's unexpected results carry what the host saw
// in the probes they name, and nothing else's.
func TestJudgeSeen(t *testing.T) {
	p := predictions(t, map[mutants.ID]string{
		mutants.TraversalOK:   "  - id: traversal_ok\n    summary: s\n    checks: [file_links]\n    attacks: []\n    known: {outcome: escaped, why: equivalent}\n",
		mutants.LinksFollowed: "  - id: links_followed\n    summary: s\n    checks: [file_links]\n    attacks: [file_api_symlink@L0]\n",
		mutants.NoPIDNS:       "  - id: no_pid_ns\n    summary: s\n    checks: [wall_timeout]\n    attacks: [runaway_loop@L3]\n    known: {attacks: [runaway_loop@L3], why: stopped anyway}\n",
	})
	r := &Runner{Predictions: p}
	// Every probe's evidence names it, so the test sees whose was taken.
	withEvidence := func(w *WorkerResult) *WorkerResult {
		for i := range w.Checks.Checks {
			w.Checks.Checks[i].Evidence = "saw " + w.Checks.Checks[i].ID
		}
		for i := range w.Attacks.Cells {
			w.Attacks.Cells[i].Evidence = "saw " + w.Attacks.Cells[i].Name()
		}
		return w
	}
	judge := func(id mutants.ID, w *WorkerResult) []report.Seen {
		d, _ := mutants.Lookup(string(id))
		return r.judge(d, workResult{result: withEvidence(w)}, nil, result(nil)).Seen
	}
	seen := func(probe, v string) report.Seen {
		return report.Seen{Probe: probe, Verdict: v, Evidence: "saw " + probe}
	}
	cases := []struct {
		name string
		got  []report.Seen
		want []report.Seen
	}{
		{"exact", judge(mutants.FailOpen, result([]string{"wall_timeout"})), nil},
		{"extra", judge(mutants.FailOpen, result([]string{"wall_timeout", "file_links"})), []report.Seen{seen("file_links", verdict.CheckFailed)}},
		{"different", judge(mutants.FailOpen, result([]string{"file_links"})),
			[]report.Seen{seen("file_links", verdict.CheckFailed), seen("wall_timeout", verdict.CheckPassed)}},
		{"cell stopped", judge(mutants.LinksFollowed, result([]string{"file_links"})), []report.Seen{seen("file_api_symlink@L0", verdict.CellStopped)}},
		{"cell not predicted", judge(mutants.FailOpen, result([]string{"wall_timeout"}, "file_api_symlink@L3")), []report.Seen{seen("file_api_symlink@L3", verdict.CellEscaped)}},
		{"known cell escaped after all", judge(mutants.NoPIDNS, result([]string{"wall_timeout"}, "runaway_loop@L3")), []report.Seen{seen("runaway_loop@L3", verdict.CellEscaped)}},
		{"known cell stopped", judge(mutants.NoPIDNS, result([]string{"wall_timeout"})), nil},
		{"a known outcome beside an unexpected cell is not named", judge(mutants.TraversalOK, result(nil, "file_api_symlink@L3")), []report.Seen{seen("file_api_symlink@L3", verdict.CellEscaped)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { assert.Check(t, is.DeepEqual(c.got, c.want)) })
	}
}

// fakes are canned workers: for each defect ("" for the baseline) the
// run its probes make up, and the probes that reach each defect's site
// (every probe, for a defect not listed).
type fakes struct {
	results map[string]*WorkerResult
	reach   map[string][]string
	hang    []string // defects whose probes hang
	// flaky lists probes whose verdict flips on every other run.
	flaky map[string]bool
	// variants overrides a check's verdict for a variant of a task, by
	// "defect|probe|plain|without" (plain as true or false); layers and
	// tookAway are what the baseline reports of every check.
	variants         map[string]bool
	layers, tookAway map[string][]string

	mu    sync.Mutex
	asked map[string][]string // defect -> the probes run with it on
}

// worker returns a Worker that prints, for a task, its probe's result
// from the canned run of the task's defect (with cat), or sleeps, for
// the defects in hang.
func (f *fakes) worker(t *testing.T) func(context.Context, Task) *exec.Cmd {
	dir := t.TempDir()
	f.asked = map[string][]string{}
	return func(ctx context.Context, task Task) *exec.Cmd {
		f.mu.Lock()
		f.asked[task.Defect] = append(f.asked[task.Defect], task.Probe)
		f.mu.Unlock()
		if contains(f.hang, task.Defect) {
			return exec.CommandContext(ctx, "sleep", "60")
		}
		res := f.probeResult(t, task)
		b, err := json.Marshal(res)
		assert.NilError(t, err)
		path := filepath.Join(dir, fmt.Sprintf("%s-%s-%d.json", task.Defect, strings.ReplaceAll(task.Probe, "@", "_"), time.Now().UnixNano()))
		assert.NilError(t, os.WriteFile(path, b, 0o644))
		return exec.CommandContext(ctx, "cat", path)
	}
}

// probeResult is task's probe's result in its defect's canned run.
func (f *fakes) probeResult(t *testing.T, task Task) ProbeResult {
	w, ok := f.results[task.Defect]
	assert.Assert(t, ok, "no canned run for %q", task.Defect)
	var res ProbeResult
	res.Layers, res.TookAway = f.layers[task.Probe], f.tookAway[task.Probe]
	if c, err := verdict.ParseCell(task.Probe); err == nil {
		l, _ := c.Level()
		cell, ok := w.Attacks.Cell(c.Attack, l)
		assert.Assert(t, ok, "no cell %s", task.Probe)
		res.Cell = &cell
	} else {
		for _, c := range w.Checks.Checks {
			if c.ID == task.Probe {
				res.Check = &c
			}
		}
		assert.Assert(t, res.Check != nil, "no check %s", task.Probe)
		if passed, ok := f.variants[fmt.Sprintf("%s|%s|%v|%s", task.Defect, task.Probe, task.Plain, task.Without)]; ok {
			c := *res.Check
			c.Passed = passed
			res.Check = &c
		}
	}
	if f.flaky[task.Probe] && task.Defect == "" && task.Repeat%2 == 1 {
		if res.Check != nil {
			c := *res.Check
			c.Passed = !c.Passed
			res.Check = &c
		}
	}
	if task.Cover {
		for _, d := range universe2.Defects {
			reach, listed := f.reach[string(d.ID)]
			if listed && contains(reach, task.Probe) || !listed && f.reachesByDefault(t, string(d.ID), task.Probe, res) {
				res.Reached = append(res.Reached, string(d.ID))
			}
		}
	}
	return res
}

// reachesByDefault is the coverage of a defect that reach does not list:
// its probes whose result differs from the baseline's (as they must), and
// wall_timeout and vault_sealed, so that every defect runs something.
func (f *fakes) reachesByDefault(t *testing.T, defect, probe string, base ProbeResult) bool {
	if probe == "wall_timeout" || probe == "vault_sealed" {
		return true
	}
	if _, ok := f.results[defect]; !ok {
		return false
	}
	mine := f.probeResult(t, Task{Probe: probe, Defect: defect})
	return mine.verdict() != base.verdict()
}

// fakeWorkers is a fakes' worker with every probe reaching every defect.
func fakeWorkers(t *testing.T, results map[string]*WorkerResult, hang ...string) func(context.Context, Task) *exec.Cmd {
	f := &fakes{results: results, hang: hang}
	return f.worker(t)
}

func TestRunnerGateAndExitCodes(t *testing.T) {
	p := predictions(t, nil)
	ok := result([]string{"wall_timeout"})
	results := map[string]*WorkerResult{"": result(nil)}
	for _, d := range courseDefects() {
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
	assert.Check(t, is.Equal(m.Defects[0].ID, string(courseDefects()[0].ID)), "defects come back in registry order")

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
	for i, d := range courseDefects() {
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
	for _, d := range courseDefects() {
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

	// What the earlier run saw behind its unexpected results is kept for
	// the probes the new verdict names.
	back.Defects[indexOf(mutants.FailOpen)].Seen = []report.Seen{{Probe: "wall_timeout", Verdict: verdict.CheckFailed, Evidence: "ran on"}}
	again, err := Rejudge(&back, predictions(t, escape), verdict.FailOnAny)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(again.Defects[indexOf(mutants.FailOpen)].Seen, back.Defects[indexOf(mutants.FailOpen)].Seen))
}

// TestRunnerInterruptLeavesNothing: cancelling a run stops its workers
// promptly and leaves no worker, temporary directory or control group.
func TestRunnerInterruptLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	results := map[string]*WorkerResult{"": result(nil)}
	tag := fmt.Sprintf("sandboxlab-runner-test-%d", os.Getpid())
	fake := fakeWorkers(t, results)
	worker := func(ctx context.Context, task Task) *exec.Cmd {
		if task.Defect == "" {
			return fake(ctx, task)
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
	jails, _ := filepath.Glob(filepath.Join(pidsHierarchy, fmt.Sprintf("%s%d-*", jailPrefix, os.Getpid())))
	assert.Check(t, is.Len(jails, 0), "control groups left")
	out, _ := exec.Command("pgrep", "-f", tag).Output()
	probe := newJail(0)
	if probe.dir == "" {
		// Without the control group only tagged programs are swept, and
		// this grandchild carries no tag.
		exec.Command("pkill", "-f", tag).Run()
		t.Skipf("no pids control group here (not root?): an untagged grandchild is not swept")
	}
	probe.close()
	assert.Check(t, is.Equal(strings.TrimSpace(string(out)), ""), "a worker's grandchild survived")
}

// Two suites: the course's defects as the registry has them, and a
// made-up hardening defect with a hardening check and attack of its own
// that run at L6 too.

const vaultOpen = "vault_open"

var universe2 = Universe{
	Checks: append(slices.Clone(universe.Checks), "vault_sealed"), Attacks: append(slices.Clone(universe.Attacks), "vault_raid"), Levels: 7,
	CheckSuites:  map[string]verdict.Suite{"wall_timeout": verdict.Course, "timeout_flag": verdict.Course, "file_links": verdict.Course, "vault_sealed": verdict.Hardening},
	AttackSuites: map[string]verdict.Suite{"runaway_loop": verdict.Course, "file_api_symlink": verdict.Course, "vault_raid": verdict.Hardening},
	Defects: append(courseDefects(),
		mutants.Defect{ID: vaultOpen, Summary: "the vault is left open", Site: "sandbox/vault.go", Suite: verdict.Hardening}),
}

// valid2 is valid with the hardening suite's baseline and prediction.
func valid2(edit map[mutants.ID]string) string {
	y := strings.Replace(valid(edit), "    file_api_symlink: 0\n", "    file_api_symlink: 0\n    vault_raid: 6\n", 1)
	if e, ok := edit[vaultOpen]; ok {
		return y + e
	}
	return y + "  - id: vault_open\n    summary: s\n    checks: [vault_sealed]\n    attacks: [vault_raid@L6]\n"
}

func predictions2(t *testing.T, edit map[mutants.ID]string) *Predictions {
	p, err := ParsePredictions([]byte(valid2(edit)), universe2)
	assert.NilError(t, err)
	return p
}

// result2 builds a worker's report over both suites, as a worker asked
// for both would print it: the checks that failed, the cells that
// escaped (besides those the correct sandbox lets through).
func result2(failed []string, escaped ...string) *WorkerResult {
	r := &WorkerResult{Checks: &report.Checks{}, Attacks: &report.Attacks{Attacks: universe2.Attacks, Suites: universe2.AttackSuites, Levels: []int{0, 1, 2, 3, 4, 5, 6}}}
	for _, c := range universe2.Checks {
		r.Checks.Checks = append(r.Checks.Checks, report.Check{ID: c, Suite: universe2.CheckSuites[c], Passed: !contains(failed, c)})
	}
	r.Checks.Tally()
	first := map[string]int{"runaway_loop": 1, "file_api_symlink": 0, "vault_raid": 6}
	for _, a := range universe2.Attacks {
		for _, l := range r.Attacks.Levels {
			if !universe2.AttackSuites[a].HasLevel(l) {
				continue
			}
			c := report.Cell{Attack: a, Level: l, Escaped: l < first[a] || contains(escaped, verdict.AtLevel(a, l).String())}
			r.Attacks.Cells = append(r.Attacks.Cells, c)
		}
	}
	r.Attacks.Summarize()
	return r
}

// suiteWorkers is fakeWorkers that also records the suites of the
// probes each defect ran.
func suiteWorkers(t *testing.T, results map[string]*WorkerResult) (func(context.Context, Task) *exec.Cmd, map[string]string) {
	f := &fakes{results: results}
	w := f.worker(t)
	asked := map[string]string{}
	return func(ctx context.Context, task Task) *exec.Cmd {
		cmd := w(ctx, task)
		f.mu.Lock()
		defer f.mu.Unlock()
		suites := map[verdict.Suite]bool{}
		for _, p := range f.asked[task.Defect] {
			suites[probeSuite2(p)] = true
		}
		var list []verdict.Suite
		for _, s := range verdict.Suites {
			if suites[s] {
				list = append(list, s)
			}
		}
		asked[task.Defect] = verdict.SuiteList(list)
		return cmd
	}, asked
}

// probeSuite2 is the suite of a probe of universe2.
func probeSuite2(probe string) verdict.Suite {
	if c, err := verdict.ParseCell(probe); err == nil {
		return universe2.AttackSuites[c.Attack]
	}
	return universe2.CheckSuites[probe]
}

// TestRunnerTwoSuites: each defect is judged by its own suite's checks
// and cells only, and its worker is asked for its suite alone; the
// baseline runs both.
func TestRunnerTwoSuites(t *testing.T) {
	results := map[string]*WorkerResult{"": result2(nil)}
	for _, d := range courseDefects() {
		// Each course defect also breaks the hardening suite's check and
		// cell: the course's verdicts must not see it.
		results[string(d.ID)] = result2([]string{"wall_timeout", "vault_sealed"}, "vault_raid@L6")
	}
	// The hardening defect also breaks a course check and cell, which
	// must not count for it.
	results[vaultOpen] = result2([]string{"vault_sealed", "file_links"}, "vault_raid@L6", "runaway_loop@L4")
	worker, asked := suiteWorkers(t, results)
	r := &Runner{Worker: worker, Predictions: predictions2(t, nil), Jobs: 4, Timeout: 5 * time.Second, FailOn: verdict.FailOnAny}
	m, err := r.Run(context.Background())
	assert.NilError(t, err)

	assert.Check(t, is.Equal(asked[""], "course,hardening"), "the baseline runs every suite")
	assert.Check(t, is.Equal(asked[string(mutants.NoNetNS)], "course"))
	assert.Check(t, is.Equal(asked[vaultOpen], "hardening"))

	assert.Check(t, m.Baseline.OK, "%v", m.Baseline.Problems)
	assert.Check(t, is.Equal(m.Gate, verdict.Pass), "every result is predicted, by its own suite")
	assert.Check(t, is.Equal(ExitCode(m), 0))
	assert.Assert(t, is.Len(m.Defects, len(courseDefects())+1))
	for _, d := range m.Defects[:len(courseDefects())] {
		assert.Check(t, is.Equal(d.Suite, verdict.Course), d.ID)
		assert.Check(t, is.DeepEqual(d.FailedChecks, []string{"wall_timeout"}), d.ID)
		assert.Check(t, is.DeepEqual(d.EscapedAttacks, []string{}), d.ID)
		assert.Check(t, is.Equal(d.Outcome, verdict.Exact), d.ID)
	}
	h := m.Defects[len(courseDefects())]
	assert.Check(t, is.Equal(h.ID, vaultOpen), "the hardening suite's defects come after the course's")
	assert.Check(t, is.Equal(h.Suite, verdict.Hardening))
	assert.Check(t, is.DeepEqual(h.FailedChecks, []string{"vault_sealed"}))
	assert.Check(t, is.DeepEqual(h.EscapedAttacks, []string{"vault_raid@L6"}))
	assert.Check(t, is.Equal(h.Outcome, verdict.Exact))
	assert.Check(t, is.Len(h.Unexpected, 0))

	assert.Assert(t, is.Len(m.Suites, 2))
	assert.Check(t, is.DeepEqual(m.Suites[0], report.SuiteResult{Suite: verdict.Course, BaselineOK: true, Problems: []string{},
		Summary: report.Summary{Defects: len(courseDefects()), Caught: len(courseDefects()), Exact: len(courseDefects())}, Gate: verdict.Pass}))
	assert.Check(t, is.DeepEqual(m.Suites[1], report.SuiteResult{Suite: verdict.Hardening, BaselineOK: true, Problems: []string{},
		Summary: report.Summary{Defects: 1, Caught: 1, Exact: 1}, Gate: verdict.Pass}))

	// Every format of the report agrees.
	dir := t.TempDir()
	_, err = report.WriteAll(dir, "mutate", m)
	assert.NilError(t, err)
	assert.Check(t, reporttest.CrossCheck(dir))

	// A hardening escape fails the run's gate and the hardening suite's,
	// not the course's.
	results[vaultOpen] = result2(nil)
	worker, _ = suiteWorkers(t, results)
	r.Worker, r.FailOn = worker, verdict.FailOnEscape
	m, err = r.Run(context.Background())
	assert.NilError(t, err)
	assert.Check(t, is.Equal(ExitCode(m), 2))
	assert.Check(t, is.Equal(m.Suites[0].Gate, verdict.Pass))
	assert.Check(t, is.Equal(m.Suites[1].Gate, verdict.Fail))
	assert.Check(t, is.Equal(m.Suites[1].Summary.UnexpectedEscapes, 1))
}

// TestRunnerSuiteBaselineBroken: a broken hardening baseline stops the
// hardening defects, not the course's; the gate fails on it.
func TestRunnerSuiteBaselineBroken(t *testing.T) {
	results := map[string]*WorkerResult{"": result2([]string{"vault_sealed"})}
	for _, d := range courseDefects() {
		results[string(d.ID)] = result2([]string{"wall_timeout"})
	}
	worker, asked := suiteWorkers(t, results)
	r := &Runner{Worker: worker, Predictions: predictions2(t, nil), Jobs: 4, Timeout: 5 * time.Second, FailOn: verdict.FailOnEscape}
	m, err := r.Run(context.Background())
	assert.NilError(t, err)
	assert.Check(t, !m.Baseline.OK)
	assert.Check(t, is.DeepEqual(m.Baseline.Problems, []string{"check vault_sealed fails on the correct sandbox: "}))
	assert.Check(t, is.Len(m.Defects, len(courseDefects())), "the course's defects ran")
	_, ran := asked[vaultOpen]
	assert.Check(t, !ran, "the hardening defect did not")
	assert.Check(t, m.Suites[0].BaselineOK)
	assert.Check(t, !m.Suites[1].BaselineOK)
	assert.Check(t, is.Equal(m.Suites[0].Gate, verdict.Pass))
	assert.Check(t, is.Equal(m.Suites[1].Gate, verdict.Fail))
	assert.Check(t, is.Equal(m.Gate, verdict.Fail))
	assert.Check(t, is.Equal(ExitCode(m), 4))
}

// TestRunnerSuiteSelection: --suite and --only choose the suites run.
func TestRunnerSuiteSelection(t *testing.T) {
	results := map[string]*WorkerResult{"": result2(nil), vaultOpen: result2([]string{"vault_sealed"}, "vault_raid@L6")}
	for _, d := range courseDefects() {
		results[string(d.ID)] = result2([]string{"wall_timeout"})
	}
	run := func(suites []verdict.Suite, only ...string) (*report.Mutation, map[string]string, error) {
		worker, asked := suiteWorkers(t, results)
		r := &Runner{Worker: worker, Predictions: predictions2(t, nil), Suites: suites, Only: only, Jobs: 4, Timeout: 5 * time.Second, FailOn: verdict.FailOnAny}
		m, err := r.Run(context.Background())
		return m, asked, err
	}
	course := []verdict.Suite{verdict.Course}
	m, asked, err := run(course)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(asked[""], "course"))
	assert.Check(t, is.Len(m.Defects, len(courseDefects())))
	assert.Check(t, is.Len(m.Suites, 1))
	_, hasVault := m.Baseline.Expected["vault_raid"]
	assert.Check(t, !hasVault, "the expectations are those of the suites run")

	m, asked, err = run(nil, vaultOpen)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(asked[""], "hardening"), "--only keeps the suites of the defects it names")
	assert.Check(t, is.Len(m.Defects, 1))
	assert.Check(t, is.Equal(m.Suites[0].Suite, verdict.Hardening))
	assert.Check(t, is.Len(m.Suites, 1))

	m, asked, err = run(nil, string(mutants.NoNetNS))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(asked[""], "course"))
	assert.Check(t, is.Len(m.Suites, 1))

	_, _, err = run(course, vaultOpen)
	assert.Check(t, is.ErrorContains(err, "defect vault_open is in the hardening suite, which is not selected (suites: course)"))
	_, _, err = run(nil, "vault_shut")
	assert.Check(t, is.ErrorContains(err, `unknown defect "vault_shut"`))
}

// TestRejudgeTwoSuites: replaying a two-suite run judges each suite's
// baseline and defects as the run did.
func TestRejudgeTwoSuites(t *testing.T) {
	results := map[string]*WorkerResult{"": result2(nil), vaultOpen: result2([]string{"vault_sealed"}, "vault_raid@L6")}
	for _, d := range courseDefects() {
		results[string(d.ID)] = result2([]string{"wall_timeout"})
	}
	worker, _ := suiteWorkers(t, results)
	r := &Runner{Worker: worker, Predictions: predictions2(t, nil), Jobs: 4, Timeout: 5 * time.Second, FailOn: verdict.FailOnEscape}
	m, err := r.Run(context.Background())
	assert.NilError(t, err)
	b, err := json.Marshal(m)
	assert.NilError(t, err)
	var back report.Mutation
	assert.NilError(t, json.Unmarshal(b, &back))
	again, err := Rejudge(&back, predictions2(t, nil), verdict.FailOnEscape)
	assert.NilError(t, err)
	again.MS = m.MS
	assert.Check(t, is.DeepEqual(again, m))

	// Without its predicted cell the hardening defect lets an attack
	// through unexpectedly: its suite's gate fails, the course's holds.
	unpredicted := map[mutants.ID]string{vaultOpen: "  - id: vault_open\n    summary: s\n    checks: [vault_sealed]\n    attacks: []\n"}
	wrong, err := Rejudge(&back, predictions2(t, unpredicted), verdict.FailOnEscape)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(ExitCode(wrong), 2))
	assert.Check(t, is.Equal(wrong.Suites[0].Gate, verdict.Pass))
	assert.Check(t, is.Equal(wrong.Suites[1].Gate, verdict.Fail))
}
