package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/mutants"
	"sandboxlab/report"
	"sandboxlab/report/reporttest"
	"sandboxlab/verdict"
)

// The soundness of mutate --incremental, on canned workers whose
// verdicts are a function of a made-up source tree: a line "fails D P"
// in a file makes probe P fail (a check) or escape (a cell) with defect
// D on, when the file is P's own, or one every probe runs (the library,
// the machinery, a package's shared file). So an edit of the tree that
// changes a verdict changes it in a full run of the edited tree, and the
// incremental run must see it; the tests compare the two, and the probe
// runs the incremental run made with the ones the edit calls for.

// incrementalOnly are the defects these tests run, and what reaches each.
var incrementalReach = map[string][]string{
	"fail_open":      {"wall_timeout"},
	"timeout_hidden": {"wall_timeout", "timeout_flag"},
	"exit_code_lost": {"timeout_flag"},
	"traversal_ok":   {"file_links", "file_api_symlink@L0", "file_api_symlink@L3"},
	"links_followed": {"file_links", "file_api_symlink@L0"},
}

// sourceTree is the made-up tree the verdicts come from: a library, the
// machinery, the checks and attacks of universe (each with its own file,
// and a file each package shares), and a report template.
func sourceTree() fstest.MapFS {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	t := fstest.MapFS{
		"go.mod":                      file("module sandboxlab\n"),
		"sandbox/run.go":              file("package sandbox\n// fails fail_open wall_timeout\n// fails timeout_hidden timeout_flag\n// fails exit_code_lost timeout_flag\n"),
		"sandbox/files.go":            file("package sandbox\n// fails links_followed file_links\n// fails links_followed file_api_symlink@L0\n"),
		"sandbox/run_test.go":         file("package sandbox\n// fails fail_open timeout_flag\n"),
		"mutants/gate.go":             file("package mutants\n"),
		"verdict/verdict.go":          file("package verdict\n"),
		"harness/worker.go":           file("package harness\n"),
		"harness/probe.go":            file("package harness\n"),
		"harness/jail.go":             file("package harness\n"),
		"report/model.go":             file("package report\n"),
		"report/mutation.go":          file("package report\n"),
		"report/templates/page.tmpl":  file("<p>{{.Lead}}</p>\n"),
		"checks/check.go":             file("package checks\n\nfunc helper() {}\n"),
		"checks/registry.go":          file("package checks\n\nvar all = []any{wallTimeout, timeoutFlag, fileLinks}\n"),
		"attacks/attacks.go":          file("package attacks\n"),
		"attacks/programs/shared.txt": file("shared\n"),
	}
	for _, c := range universe.Checks {
		t["checks/"+c+".go"] = file(fmt.Sprintf("package checks\n\nvar %s = func() { helper() }\n", camel(c)))
	}
	for _, a := range universe.Attacks {
		t["attacks/"+a+".go"] = file("package attacks\n\ntype " + camel(a) + " struct{}\n")
		t["attacks/programs/"+a+".py"] = file("print('" + a + "')\n")
	}
	return t
}

func camel(id string) string {
	parts := strings.Split(id, "_")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

// edit returns a copy of tree with file's content replaced.
func edit(tree fstest.MapFS, file, content string) fstest.MapFS {
	out := maps.Clone(tree)
	out[file] = &fstest.MapFile{Data: []byte(content)}
	return out
}

// treeResults are the canned runs tree gives: the baseline's, and each
// defect's, from the "fails D P" lines of the files P runs.
func treeResults(tree fstest.MapFS) map[string]*WorkerResult {
	own := map[string]string{}
	for _, c := range universe.Checks {
		own["checks/"+c+".go"] = c
	}
	for _, a := range universe.Attacks {
		own["attacks/"+a+".go"], own["attacks/programs/"+a+".py"] = a, a
	}
	failed, escaped := map[string][]string{}, map[string][]string{}
	for name, f := range tree {
		if strings.HasPrefix(name, "report/templates/") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		for _, line := range strings.Split(string(f.Data), "\n") {
			var d, p string
			line = strings.TrimPrefix(strings.TrimPrefix(line, "// "), "# ")
			if n, _ := fmt.Sscanf(line, "fails %s %s", &d, &p); n != 2 {
				continue
			}
			owner, _, _ := strings.Cut(p, "@")
			if o, ok := own[name]; ok && o != owner {
				continue
			}
			if strings.Contains(p, "@") {
				escaped[d] = append(escaped[d], p)
			} else {
				failed[d] = append(failed[d], p)
			}
		}
	}
	out := map[string]*WorkerResult{"": result(nil)}
	for _, d := range courseDefects() {
		out[string(d.ID)] = result(failed[string(d.ID)], escaped[string(d.ID)]...)
	}
	return out
}

// incremental runs the five defects on the canned workers of tree under
// env, reusing prev's verdicts when prev is set, and returns the report
// (as its JSON reads back) and the probe runs asked for, by defect.
func incremental(t *testing.T, tree fstest.MapFS, env Fingerprint, preds *Predictions, prev *report.Mutation, edits ...func(*Runner)) (*report.Mutation, map[string][]string) {
	t.Helper()
	in, err := ComputeInputs(tree, env, universe)
	assert.NilError(t, err)
	f := &fakes{results: treeResults(tree), reach: incrementalReach}
	r := &Runner{Worker: f.worker(t), Predictions: preds, Only: slices.Sorted(maps.Keys(incrementalReach)),
		Jobs: 4, Timeout: 10 * time.Second, FailOn: verdict.FailOnEscape, Inputs: in, Previous: prev}
	for _, e := range edits {
		e(r)
	}
	m, err := r.Run(context.Background())
	assert.NilError(t, err)
	for d := range f.asked {
		slices.Sort(f.asked[d])
	}
	return roundTrip(t, m), f.asked
}

// sameVerdicts checks that got gives every defect and every baseline probe
// the verdict want gives it.
func sameVerdicts(t *testing.T, got, want *report.Mutation) {
	t.Helper()
	assert.Assert(t, is.Len(got.Defects, len(want.Defects)))
	for i, d := range got.Defects {
		w := want.Defects[i]
		assert.Check(t, is.Equal(d.ID, w.ID))
		assert.Check(t, is.Equal(d.Outcome, w.Outcome), d.ID)
		assert.Check(t, is.DeepEqual(d.FailedChecks, w.FailedChecks), d.ID)
		assert.Check(t, is.DeepEqual(d.EscapedAttacks, w.EscapedAttacks), d.ID)
		assert.Check(t, is.DeepEqual(d.Unexpected, w.Unexpected), d.ID)
		assert.Check(t, is.Equal(d.UnexpectedEscape, w.UnexpectedEscape), d.ID)
	}
	assert.Check(t, is.DeepEqual(got.Summary, want.Summary))
	assert.Check(t, is.Equal(got.Gate, want.Gate))
	assert.Check(t, is.DeepEqual(got.Baseline.Checks.FailedIDs(), want.Baseline.Checks.FailedIDs()))
	assert.Check(t, is.DeepEqual(got.Baseline.Attacks.Escaped(), want.Baseline.Attacks.Escaped()))
	assert.Check(t, is.DeepEqual(reachedSites(got), reachedSites(want)))
}

// reachedSites is a run's coverage without its costs.
func reachedSites(m *report.Mutation) map[string][]string {
	out := map[string][]string{}
	for _, c := range m.Run.Coverage {
		out[c.Probe] = c.Reached
	}
	return out
}

// TestIncrementalIsSound: after each kind of change, the incremental run
// gives the verdicts of a full run of the changed tree, and runs exactly
// what the change can affect.
func TestIncrementalIsSound(t *testing.T) {
	env := Fingerprint{"kernel": "6.1.0", "landlock_abi": "7"}
	tree := sourceTree()
	preds := predictions(t, nil)
	prev, asked := incremental(t, tree, env, preds, nil)
	assert.Assert(t, is.Len(asked[""], 3+2*6), "the first run runs the whole baseline")
	everything := asked

	cases := []struct {
		name string
		tree fstest.MapFS
		env  Fingerprint
		// ran are the probe runs the change calls for, by defect ("" for
		// the baseline); nil: everything that a full run runs.
		ran map[string][]string
	}{
		{name: "a report template", tree: edit(tree, "report/templates/page.tmpl", "<h1>{{.Lead}}</h1>\n"), env: env, ran: map[string][]string{}},
		{name: "a test file of the library", tree: edit(tree, "sandbox/run_test.go", "package sandbox\n"), env: env, ran: map[string][]string{}},
		{name: "one check's file", tree: edit(tree, "checks/file_links.go", "package checks\n\nvar fileLinks = func() {}\n// fails traversal_ok file_links\n"), env: env,
			ran: map[string][]string{"": {"file_links"}, "traversal_ok": {"file_links"}, "links_followed": {"file_links"}}},
		{name: "one attack's program", tree: edit(tree, "attacks/programs/file_api_symlink.py", "print(1)\n# fails traversal_ok file_api_symlink@L3\n"), env: env,
			ran: map[string][]string{"": cellsOf("file_api_symlink"), "traversal_ok": {"file_api_symlink@L0", "file_api_symlink@L3"}, "links_followed": {"file_api_symlink@L0"}}},
		{name: "a line of sandbox/run.go", tree: edit(tree, "sandbox/run.go", "package sandbox\n// fails timeout_hidden timeout_flag\n// fails exit_code_lost timeout_flag\n"), env: env},
		{name: "the files the checks share", tree: edit(tree, "checks/check.go", "package checks\n\nfunc helper() { _ = 1 }\n"), env: env,
			ran: map[string][]string{"": {"file_links", "timeout_flag", "wall_timeout"}, "fail_open": {"wall_timeout"}, "timeout_hidden": {"timeout_flag", "wall_timeout"},
				"exit_code_lost": {"timeout_flag"}, "traversal_ok": {"file_links"}, "links_followed": {"file_links"}}},
		{name: "the machinery", tree: edit(tree, "mutants/gate.go", "package mutants\n// changed\n"), env: env},
		{name: "the kernel", tree: tree, env: Fingerprint{"kernel": "6.2.0", "landlock_abi": "7"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, _ := incremental(t, c.tree, c.env, preds, nil)
			got, asked := incremental(t, c.tree, c.env, preds, prev)
			sameVerdicts(t, got, want)
			wantRan := c.ran
			if wantRan == nil {
				wantRan = everything
			}
			assert.Check(t, is.DeepEqual(nonEmpty(asked), nonEmpty(wantRan)))
			assert.Assert(t, got.Run.Reused != nil)
			assert.Check(t, is.Equal(got.Run.Reused.From, prev.Run.ID))
			if c.ran != nil && len(c.ran) == 0 {
				assert.Check(t, is.Equal(got.Run.Reused.Defects, len(incrementalReach)), "every defect reused whole")
				assert.Check(t, is.Equal(got.Run.ProbeRuns+got.Run.BaselineProbeRuns, 0))
			}
		})
	}
}

// TestIncrementalChangeIsSeen: the edit of one check's file that the
// soundness test makes does change a verdict, so reusing the earlier one
// would have been caught.
func TestIncrementalChangeIsSeen(t *testing.T) {
	env := Fingerprint{"kernel": "6.1.0"}
	tree := sourceTree()
	preds := predictions(t, nil)
	before, _ := incremental(t, tree, env, preds, nil)
	edited := edit(tree, "checks/file_links.go", "package checks\n\nvar fileLinks = func() {}\n// fails traversal_ok file_links\n")
	after, _ := incremental(t, edited, env, preds, nil)
	i := slices.IndexFunc(before.Defects, func(d report.Defect) bool { return d.ID == "traversal_ok" })
	assert.Assert(t, i >= 0)
	assert.Check(t, !slices.Equal(before.Defects[i].FailedChecks, after.Defects[i].FailedChecks))
}

// TestIncrementalNewProbe: a check the earlier run did not have runs in
// the baseline and against every defect whose site it reaches; the rest
// is reused.
func TestIncrementalNewProbe(t *testing.T) {
	env := Fingerprint{"kernel": "6.1.0"}
	tree := sourceTree()
	preds := predictions(t, nil)
	prev, _ := incremental(t, tree, env, preds, nil)
	delete(prev.Run.Inputs.Probes, "checks/timeout_flag")
	want, _ := incremental(t, tree, env, preds, nil)
	got, asked := incremental(t, tree, env, preds, prev)
	sameVerdicts(t, got, want)
	assert.Check(t, is.DeepEqual(nonEmpty(asked), map[string][]string{"": {"timeout_flag"}, "timeout_hidden": {"timeout_flag"}, "exit_code_lost": {"timeout_flag"}}))
	assert.Check(t, is.Contains(got.Run.Reused.Changed, "checks/timeout_flag (new)"))
}

// TestIncrementalPredictionEdit: a prediction edited since the earlier
// run re-judges its defect's reused facts, running nothing, as --replay
// would; the report says so.
func TestIncrementalPredictionEdit(t *testing.T) {
	env := Fingerprint{"kernel": "6.1.0"}
	tree := sourceTree()
	prev, _ := incremental(t, tree, env, predictions(t, nil), nil)
	edited := predictions(t, map[mutants.ID]string{mutants.ExitCodeLost: "  - id: exit_code_lost\n    summary: s\n    checks: [timeout_flag]\n    attacks: []\n"})
	want, _ := incremental(t, tree, env, edited, nil)
	got, asked := incremental(t, tree, env, edited, prev)
	sameVerdicts(t, got, want)
	assert.Check(t, is.Len(nonEmpty(asked), 0), "nothing ran: %v", asked)
	assert.Check(t, is.DeepEqual(got.Run.Reused.Rejudged, []string{"exit_code_lost"}))
	// Every format of the report says the same of it.
	dir := t.TempDir()
	_, err := report.WriteAll(dir, "mutate", got)
	assert.NilError(t, err)
	assert.Check(t, reporttest.CrossCheck(dir))
	text, err := os.ReadFile(filepath.Join(dir, "mutate.txt"))
	assert.NilError(t, err)
	words := strings.Join(strings.Fields(string(text)), " ") // unwrapped
	assert.Check(t, is.Contains(words, "Reused from run "+prev.Run.ID))
	assert.Check(t, is.Contains(words, "judged again against their edited predictions: exit_code_lost"))
	replayed, err := Rejudge(prev, edited, verdict.FailOnEscape)
	assert.NilError(t, err)
	sameVerdicts(t, got, replayed)
}

// TestIncrementalNoVerdictReruns: what gave no verdict, or flaked, in the
// earlier run is run again, not reused; an earlier report without input
// digests reuses nothing.
func TestIncrementalNoVerdictReruns(t *testing.T) {
	env := Fingerprint{"kernel": "6.1.0"}
	tree := sourceTree()
	preds := predictions(t, nil)
	prev, _ := incremental(t, tree, env, preds, nil)
	i := slices.IndexFunc(prev.Defects, func(d report.Defect) bool { return d.ID == "fail_open" })
	prev.Defects[i].Outcome, prev.Defects[i].Error = verdict.Hung, "hung"
	prev.Flaky = append(prev.Flaky, report.Flake{Probe: "file_links", Verdicts: []string{"pass", "fail"}})
	_, asked := incremental(t, tree, env, preds, prev)
	assert.Check(t, is.DeepEqual(nonEmpty(asked), map[string][]string{"": {"file_links"}, "fail_open": {"wall_timeout"},
		"traversal_ok": {"file_links"}, "links_followed": {"file_links"}}))

	var old report.Mutation
	b, err := json.Marshal(prev)
	assert.NilError(t, err)
	assert.NilError(t, json.Unmarshal(b, &old))
	old.Run.Inputs = nil
	got, asked := incremental(t, tree, env, preds, &old)
	assert.Check(t, is.Len(asked[""], 3+2*6), "no digests: everything runs")
	assert.Check(t, is.Contains(strings.Join(got.Run.Reused.Changed, ";"), "records no input digests"))
}

// cellsOf lists an attack's cells at the course's levels.
func cellsOf(attack string) []string {
	var out []string
	for l := range 6 {
		out = append(out, verdict.AtLevel(attack, l).String())
	}
	return out
}

// nonEmpty drops the defects that ran nothing.
func nonEmpty(m map[string][]string) map[string][]string {
	out := map[string][]string{}
	for k, v := range m {
		if len(v) > 0 {
			out[k] = slices.Sorted(slices.Values(v))
		}
	}
	return out
}

// TestIncrementalShards: incremental shards merge into the incremental
// unsharded run, what they reused added up; shards that measured other
// inputs merge, but the merged report cannot be reused from.
func TestIncrementalShards(t *testing.T) {
	env := Fingerprint{"kernel": "6.1.0"}
	tree := edit(sourceTree(), "checks/file_links.go", "package checks\n\nvar fileLinks = func() {}\n// fails traversal_ok file_links\n")
	preds := predictions(t, nil)
	prev, _ := incremental(t, sourceTree(), env, preds, nil)
	whole, _ := incremental(t, tree, env, preds, prev)
	var shards []*report.Mutation
	for k := 1; k <= 2; k++ {
		s, _ := incremental(t, tree, env, preds, prev, func(r *Runner) { r.Shard = Shard{K: k, N: 2} })
		shards = append(shards, s)
	}
	merged, err := Merge(shards, verdict.FailOnEscape)
	assert.NilError(t, err)
	sameVerdicts(t, merged, whole)
	assert.Check(t, is.DeepEqual(merged.Run.Inputs, whole.Run.Inputs))
	assert.Check(t, is.Equal(merged.Run.Reused.ProbeRuns, whole.Run.Reused.ProbeRuns))
	assert.Check(t, is.Equal(merged.Run.Reused.Defects, whole.Run.Reused.Defects))

	shards[1].Run.Inputs.Environment["kernel"] = "6.2.0"
	merged, err = Merge(shards, verdict.FailOnEscape)
	assert.NilError(t, err)
	assert.Check(t, merged.Run.Inputs == nil)
	shards[1].Run.Reused.From = "another"
	_, err = Merge(shards, verdict.FailOnEscape)
	assert.Check(t, is.ErrorContains(err, "reused another run's verdicts"))
}
