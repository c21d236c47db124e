package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/skip"

	"sandboxlab"
	"sandboxlab/report"
	"sandboxlab/report/reporttest"
	"sandboxlab/verdict"
)

// The mutation tests run the real harness in this process, as 'sandboxlab
// mutate' does (its defaults, the built-in predictions, every suite),
// with this test binary as the worker (see TestMain). What the CLI adds,
// flags, the exit code and the CI annotations it prints, has tests of its
// own in cmd/sandboxlab that need no mutation run.

// TestMutate is the project's main promise, run once per 'make test': the
// full mutation run on the embedded defaults reproduces the course notes.
// All 26 checks pass and the attack matrix matches on the correct sandbox;
// 27 of 29 defects are caught, 25 exactly as predicted; traversal_ok and
// abs_path_ok escape as known equivalent mutants; timeout_hidden is too
// wide and exit_code_lost extra, both known; the gate passes.
//
// The edits of predictions.yaml that must fail the gate are then judged
// against the facts this run measured (Rejudge, as mutate --replay does),
// so that they cost seconds, not another full run.
func TestMutate(t *testing.T) {
	skip.If(t, testing.Short(), "the full mutation run (about 6 minutes on two cores): run without -short, as make test does")
	dir := filepath.Join(t.TempDir(), "reports")
	start := time.Now()
	run := mutate(t, nil)
	t.Logf("full mutation run: %v", time.Since(start).Round(time.Second))
	// As 'mutate --format json --out DIR': every format into DIR, and the
	// JSON, byte for byte what stdout would get, is what is judged.
	_, err := report.WriteAllWith(dir, "mutate", run, report.Options{Sources: sandboxlab.Sources, Locate: SiteSpans(sandboxlab.Sources)})
	assert.NilError(t, err)
	assert.NilError(t, reporttest.CrossCheck(dir), "the four formats disagree")
	facts := filepath.Join(dir, "mutate.json")
	m := readFacts(t, facts)
	assert.Check(t, is.Equal(ExitCode(m), verdict.ExitOK))
	if ExitCode(m) == verdict.ExitOK {
		fullRun = m
	}

	assert.Check(t, m.Baseline.OK, "baseline problems: %v", m.Baseline.Problems)
	// The course's figures are the course's suite's share of the run,
	// whatever the hardening suite adds.
	assert.Check(t, is.Equal(m.Baseline.Checks.InSuite(verdict.Course).Passed, 26))
	course, ok := m.SuiteResult(verdict.Course)
	assert.Assert(t, ok, "the run has no course suite")
	assert.Check(t, is.DeepEqual(course.Summary, report.Summary{
		Defects: 29, Caught: 27, Escaped: 2, Exact: 25, TooWide: 1, Extra: 1,
	}), "per defect:\n%s", unexpectedLines(m))
	assert.Check(t, is.Equal(course.Gate, verdict.Pass))
	assert.Check(t, is.Equal(m.Gate, verdict.Pass))

	d := defects(m)
	for _, id := range []string{"traversal_ok", "abs_path_ok"} {
		assert.Check(t, is.Equal(d[id].Outcome, verdict.Escaped), id)
		assert.Check(t, d[id].Known != nil && d[id].Known.Outcome == verdict.Escaped, id)
	}
	assert.Check(t, is.DeepEqual(d["path_guards_off"].FailedChecks, []string{"names_traversal", "names_absolute", "file_links"}))
	assert.Check(t, is.DeepEqual(d["timeout_hidden"].FailedChecks, []string{"timeout_flag"}))
	assert.Check(t, is.Equal(d["timeout_hidden"].Outcome, verdict.TooWide))
	assert.Check(t, is.DeepEqual(d["exit_code_lost"].FailedChecks, []string{"exit_status", "tool_errors"}))
	assert.Check(t, is.Equal(d["exit_code_lost"].Outcome, verdict.Extra))
	assert.Check(t, is.DeepEqual(d["kill_leader_only"].FailedChecks, []string{"timeout_kills_tree"}),
		"caught only by the check that takes the CPU limit away")

	// Every check can fail: each one is caught failing by some defect.
	caught := map[string]bool{}
	for _, d := range m.Defects {
		for _, c := range d.FailedChecks {
			caught[c] = true
		}
	}
	for _, c := range m.Baseline.Checks.Checks {
		assert.Check(t, caught[c.ID], "no defect makes %s fail: it could be a check that cannot fail", c.ID)
	}

	root := moduleRoot(t)
	preds, err := os.ReadFile(filepath.Join(root, "predictions.yaml"))
	assert.NilError(t, err)

	t.Run("removing a known entry is an unexpected escape", func(t *testing.T) {
		known := regexp.MustCompile(`(?m)(  - id: traversal_ok\n(?:    .*\n)*?)    known:\n      outcome: escaped\n      why: .*\n`)
		assert.Assert(t, known.Match(preds), "predictions.yaml: no known block for traversal_ok")
		edited := writePredictions(t, known.ReplaceAll(preds, []byte("$1")))
		again, text := replay(t, facts, edited, verdict.FailOnEscape, report.Text)
		assert.Check(t, is.Equal(ExitCode(again), verdict.ExitEscape))
		assert.Check(t, is.Contains(text, "The gate fails"))
		assert.Check(t, is.Contains(text, "traversal_ok"))
		var annotations bytes.Buffer
		assert.NilError(t, report.WriteGitHubAnnotations(&annotations, again, SiteLines(root)))
		line := SiteLines(root)(report.Defect{ID: "traversal_ok", Site: "sandbox/files.go"})
		assert.Check(t, line > 1)
		assert.Check(t, is.Contains(annotations.String(), fmt.Sprintf("::error file=sandbox/files.go,line=%d,title=unexpected escape%%3A traversal_ok::", line)),
			"a CI annotation at the planted site")
	})
	t.Run("predicting that a caught defect escapes is a divergence", func(t *testing.T) {
		entry := regexp.MustCompile(`(?m)(  - id: fail_open\n(?:    .*\n)*?    checks: )\[fail_closed\]`)
		assert.Assert(t, entry.Match(preds))
		edited := writePredictions(t, entry.ReplaceAll(preds, []byte("$1[]")))
		// Markdown, never wrapped, so that a reason is found on one line.
		again, md := replay(t, facts, edited, verdict.FailOnAny, report.Markdown)
		assert.Check(t, is.Equal(ExitCode(again), verdict.ExitDivergence))
		assert.Check(t, is.Contains(md, "fail_open"))
		assert.Check(t, is.Contains(md, "extra: predicted none, failed fail_closed"))
		// Under the default policy the gate fails on escapes only.
		again, _ = replay(t, facts, edited, verdict.FailOnEscape, report.Text)
		assert.Check(t, is.Equal(ExitCode(again), verdict.ExitOK))
	})
	t.Run("the facts replayed unchanged give the same verdict", func(t *testing.T) {
		again, out := replay(t, facts, "", verdict.FailOnEscape, report.JSON)
		assert.Check(t, is.Equal(ExitCode(again), verdict.ExitOK))
		var decoded report.Mutation
		assert.NilError(t, json.Unmarshal([]byte(out), &decoded))
		assert.Check(t, is.DeepEqual(decoded.Summary, m.Summary))
		assert.Check(t, is.DeepEqual(decoded.Suites, m.Suites))
	})
}

// TestMutatePredictionErrors: a misspelt check id is a clear error that
// names its line, before anything runs.
func TestMutatePredictionErrors(t *testing.T) {
	preds, err := os.ReadFile(filepath.Join(moduleRoot(t), "predictions.yaml"))
	assert.NilError(t, err)
	typo := strings.Replace(string(preds), "checks: [no_network]", "checks: [no_netwrok]", 1)
	line := 1 + strings.Count(typo[:strings.Index(typo, "no_netwrok")], "\n")
	_, _, err = LoadPredictions(writePredictions(t, []byte(typo)))
	assert.Check(t, is.ErrorContains(err, fmt.Sprintf(`line %d: no_net_ns: unknown check "no_netwrok"`, line)))

	unknownField := strings.Replace(string(preds), "    summary: no network namespace\n", "    summary: no network namespace\n    sumary: typo\n", 1)
	_, _, err = LoadPredictions(writePredictions(t, []byte(unknownField)))
	assert.Check(t, is.ErrorContains(err, "field sumary not found"))
}

// fullRun is TestMutate's report, read back from its JSON, once it has
// passed in this process: later tests compare with its verdicts instead
// of making them again.
var fullRun *report.Mutation

// TestMutateSelectionIsSound: on a subset, the run that selects probes by
// coverage gives every defect the verdict of the run that runs them all:
// the same outcome, failed checks and attack escapes, from fewer probe
// runs. The selected verdicts are TestMutate's full run's when it ran
// before in this process (a subset's selection is each defect's own),
// else a selected run of the subset's.
func TestMutateSelectionIsSound(t *testing.T) {
	skip.If(t, testing.Short(), "up to four mutation runs of subsets (about 2 minutes): run without -short, as make test does")
	runs := []struct {
		suite verdict.Suite
		only  []string
	}{
		// One defect per planted file of the library's kinds: the run's
		// set-up, the init, the hardened layers, the egress proxy; and the
		// init's reaper, whose site is asked only once the deadline is up.
		{verdict.Hardening, []string{"run_shared", "no_seccomp", "pids_monitor_only", "egress_deny_ignored", "init_no_deadline"}},
		// A defect of one layer (mutants.Defect.Layer) whose site every
		// run passes: the probes that declare their layers without it
		// (cpu_limit, tool_wording, process_cap, the runaway loops) do not
		// run under it.
		{verdict.Course, []string{"no_fsize_limit"}},
	}
	for _, c := range runs {
		t.Run(string(c.suite), func(t *testing.T) {
			mutation := func(noSelect bool) *report.Mutation {
				m := roundTrip(t, mutate(t, func(r *Runner) {
					r.Suites, r.Only, r.NoSelect = []verdict.Suite{c.suite}, c.only, noSelect
				}))
				assert.Assert(t, is.Equal(ExitCode(m), verdict.ExitOK), "baseline problems: %v; per defect:\n%s", m.Baseline.Problems, unexpectedLines(m))
				return m
			}
			sel := fullRun
			if sel == nil {
				sel = mutation(false)
			} else {
				t.Log("the selected verdicts are TestMutate's full run's")
			}
			all := mutation(true)
			assert.Assert(t, sel.Run != nil && all.Run != nil)
			assert.Check(t, sel.Run.Selection && !all.Run.Selection)
			var selected []report.Defect
			probeRuns := 0
			for _, d := range sel.Defects {
				if slices.Contains(c.only, d.ID) {
					selected = append(selected, d)
					probeRuns += d.Probes
					if c.suite == verdict.Course {
						assert.Check(t, d.Probes < len(d.Reached), "%s: its layer narrowed nothing (%d probes run, %d reached)", d.ID, d.Probes, len(d.Reached))
					}
				}
			}
			assert.Check(t, probeRuns < all.Run.ProbeRuns, "selection ran %d probe runs, all of them %d", probeRuns, all.Run.ProbeRuns)
			t.Logf("probe runs: %d selected, %d without selection", probeRuns, all.Run.ProbeRuns)
			assert.Assert(t, is.Len(selected, len(all.Defects)))
			for i, d := range selected {
				o := all.Defects[i]
				assert.Check(t, is.Equal(d.ID, o.ID))
				assert.Check(t, is.Equal(d.Outcome, o.Outcome), d.ID)
				assert.Check(t, is.DeepEqual(d.FailedChecks, o.FailedChecks), d.ID)
				assert.Check(t, is.DeepEqual(d.EscapedAttacks, o.EscapedAttacks), d.ID)
			}
		})
	}
}

// TestMutateMaskingRediscoversTheCourse: told nothing, the masking search
// finds the course's case: run plain (its CPU-off undone), the tree-kill
// check misses kill_leader_only, and taking the CPU limit away reveals it.
func TestMutateMaskingRediscoversTheCourse(t *testing.T) {
	skip.If(t, testing.Short(), "a mutation run with the masking search (about a minute): run without -short, as make test does")
	m := roundTrip(t, mutate(t, func(r *Runner) { r.Only, r.Masking = []string{"kill_leader_only"}, true }))
	assert.Assert(t, is.Equal(ExitCode(m), verdict.ExitOK))
	// Exactly the one: any other layer of L1 taken away from the plain
	// check leaves the CPU limit to kill the spinning children in time.
	assert.Check(t, is.DeepEqual(m.Masking, []report.Mask{{Defect: "kill_leader_only", Probe: "timeout_kills_tree", Plain: true, Layer: "cpu_limit"}}))
}

// TestMutateIncremental: on a handful of course defects, with the real
// workers, mutate --incremental reuses what it may and gives the verdicts
// of the full run: after a change of a report template nothing runs;
// after a change of one check's file that check runs again, on the
// baseline and with each defect whose site it reaches, and nothing else.
// The changes are made to a copy of the sources built into this binary
// (what the digests are taken of), not to the checkout: the verdicts of
// the edited tree are the full run's because the edits change no
// behaviour, and the test is of what reruns. TestIncrementalIsSound
// shows on canned workers that edits that do change behaviour are seen,
// and the library's and the kernel's cases, which rerun everything.
func TestMutateIncremental(t *testing.T) {
	skip.If(t, testing.Short(), "a mutation run of a subset and two incremental runs (about 30 s): run without -short, as make test does")
	only := strings.Split("fail_open,exit_code_lost,traversal_ok,no_sweep,quota_ignored", ",")
	env := HostFingerprint()
	run := func(edits map[string]string, prev *report.Mutation) *report.Mutation {
		in, err := ComputeInputs(sourcesWith(t, edits), env, Registered())
		assert.NilError(t, err)
		return roundTrip(t, mutate(t, func(r *Runner) {
			r.Suites, r.Only, r.Inputs, r.Previous = []verdict.Suite{verdict.Course}, only, in, prev
		}))
	}
	start := time.Now()
	full := run(nil, nil)
	t.Logf("full run of the subset: %v, %d + %d probe runs", time.Since(start).Round(time.Second), full.Run.BaselineProbeRuns, full.Run.ProbeRuns)
	assert.Assert(t, is.Equal(ExitCode(full), verdict.ExitOK), "per defect:\n%s", unexpectedLines(full))

	start = time.Now()
	same := run(map[string]string{"report/templates/page.html.tmpl": "<!-- edited -->\n"}, full)
	t.Logf("after a template's change: %v", time.Since(start).Round(time.Millisecond))
	assert.Check(t, is.Equal(same.Run.BaselineProbeRuns+same.Run.ProbeRuns, 0), "nothing runs")
	assert.Check(t, is.Equal(same.Run.Reused.Defects, len(only)))
	assert.Check(t, is.Equal(same.Run.Reused.From, full.Run.ID))
	sameVerdicts(t, same, full)

	const check = "exit_status"
	var reaching []string
	for _, d := range full.Defects {
		if slices.Contains(d.Reached, check) {
			reaching = append(reaching, d.ID)
		}
	}
	assert.Assert(t, len(reaching) > 0, "no defect of the subset reaches %s", check)
	start = time.Now()
	edited := run(map[string]string{"checks/" + check + ".go": "\n// edited\n"}, full)
	t.Logf("after a change of checks/%s.go: %v", check, time.Since(start).Round(time.Millisecond))
	assert.Check(t, is.Equal(edited.Run.BaselineProbeRuns, 1))
	assert.Check(t, is.Equal(edited.Run.ProbeRuns, len(reaching)), "one probe run for each of %v", reaching)
	for _, d := range edited.Defects {
		ran := d.Reuse == nil || len(d.Reuse.Probes) < len(d.Reached)
		assert.Check(t, is.Equal(ran, slices.Contains(reaching, d.ID)), d.ID)
	}
	sameVerdicts(t, edited, full)
}

// sourcesWith is a copy of the sources built into the binary, with the
// text of edits appended to (or making) the files they name.
func sourcesWith(t *testing.T, edits map[string]string) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	err := fs.WalkDir(sandboxlab.Sources, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sandboxlab.Sources, p)
		out[p] = &fstest.MapFile{Data: b}
		return err
	})
	assert.NilError(t, err)
	for p, text := range edits {
		var b []byte
		if f, ok := out[p]; ok {
			b = slices.Clone(f.Data)
		}
		out[p] = &fstest.MapFile{Data: append(b, text...)}
	}
	return out
}

// mutate runs the harness as 'sandboxlab mutate' does with no flags (the
// built-in predictions, every suite, the default pool, timeout and gate),
// after edit, if any, has set what the test's flags would.
func mutate(t *testing.T, edit func(*Runner)) *report.Mutation {
	t.Helper()
	preds, digest, err := LoadPredictions("")
	assert.NilError(t, err)
	suites, err := verdict.ParseSuites(verdict.AllSuites)
	assert.NilError(t, err)
	r := &Runner{Worker: WorkerCommand, Idle: IdleProbe, Predictions: preds, Suites: suites,
		Jobs: DefaultJobs(), Cores: DefaultCores(), Timeout: DefaultTimeout, FailOn: verdict.FailOnEscape,
		Identity: Identity(), PredictionsDigest: digest}
	if edit != nil {
		edit(r)
	}
	m, err := r.Run(t.Context())
	assert.NilError(t, err)
	return m
}

// replay judges the facts of an earlier run (its JSON report) against
// the predictions file (the built-in one for "") as mutate --replay does,
// and renders the result in format f.
func replay(t *testing.T, facts, predictions string, failOn verdict.FailOn, f report.Format) (*report.Mutation, string) {
	t.Helper()
	preds, _, err := LoadPredictions(predictions)
	assert.NilError(t, err)
	m, err := Rejudge(readFacts(t, facts), preds, failOn)
	assert.NilError(t, err)
	var b strings.Builder
	assert.NilError(t, report.WriteWith(&b, f, m, report.Options{}))
	return m, b.String()
}

// readFacts reads a mutate report back from its JSON.
func readFacts(t *testing.T, path string) *report.Mutation {
	t.Helper()
	b, err := os.ReadFile(path)
	assert.NilError(t, err)
	var m report.Mutation
	assert.NilError(t, json.Unmarshal(b, &m))
	return &m
}

// roundTrip is m as its JSON report reads back: what the CLI's --format
// json gives.
func roundTrip(t *testing.T, m *report.Mutation) *report.Mutation {
	t.Helper()
	b, err := json.Marshal(m)
	assert.NilError(t, err)
	var out report.Mutation
	assert.NilError(t, json.Unmarshal(b, &out))
	return &out
}

// moduleRoot is the module's directory: the parent of this package's.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	assert.NilError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	assert.NilError(t, err, "not in the sandboxlab module")
	return root
}

func writePredictions(t *testing.T, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "predictions.yaml")
	assert.NilError(t, os.WriteFile(path, b, 0o644))
	return path
}

// unexpectedLines lists the defects with something unexpected, for a
// failure message worth reading.
func unexpectedLines(m *report.Mutation) string {
	var b strings.Builder
	for _, d := range m.Defects {
		if len(d.Unexpected) > 0 {
			fmt.Fprintf(&b, "%s %s: %s\n", d.ID, d.Outcome, strings.Join(d.Unexpected, "; "))
			// What the host saw, so that a failure in CI's log says why.
			for _, s := range d.Seen {
				fmt.Fprintf(&b, "  %s %s: %s\n", s.Probe, s.Verdict, s.Evidence)
			}
		}
	}
	return b.String()
}
