package harness

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/mutants"
	"sandboxlab/report"
	"sandboxlab/report/reporttest"
	"sandboxlab/verdict"
)

func TestParseDiff(t *testing.T) {
	diff := `diff --git a/sandbox/run.go b/sandbox/run.go
index 1..2 100644
--- a/sandbox/run.go
+++ b/sandbox/run.go
@@ -10 +10 @@ func a() {
-	x := 1
+	x := 2
@@ -20,3 +19,0 @@ func b() {
-	gone
@@ -40,0 +41,2 @@ func c() {
+	new
+	new
diff --git a/checks/old.go b/checks/old.go
deleted file mode 100644
--- a/checks/old.go
+++ /dev/null
@@ -1,3 +0,0 @@
-package checks
diff --git a/attacks/programs/x.py b/attacks/programs/x.py
old mode 100644
new mode 100755
diff --git "a/checks/sp ace.go" "b/checks/sp ace.go"
--- "a/checks/sp ace.go"
+++ "b/checks/sp ace.go"
@@ -1 +1 @@
-a
+b
`
	got := parseDiff(diff)
	want := map[string][]lineRange{
		"sandbox/run.go":        {{10, 10}, {19, 20}, {41, 42}},
		"attacks/programs/x.py": nil, // its mode: changed, no line
		"checks/old.go":         nil, // deleted
		"checks/sp ace.go":      {{1, 1}},
	}
	assert.Check(t, reflect.DeepEqual(got, want), "got %v", got)
}

// TestSiteSpansHoldTheSites: every planted site of the registry lies in
// the declaration siteSpans finds for it, in this checkout.
func TestSiteSpansHoldTheSites(t *testing.T) {
	root := moduleRoot(t)
	for _, d := range mutants.All {
		spans, err := siteSpans(os.DirFS(root), d)
		assert.NilError(t, err, d.ID)
		line := SiteLines(root)(report.Defect{ID: string(d.ID), Site: d.Site})
		assert.Check(t, overlaps(spans, lineRange{line, line}), "%s: line %d is in none of %v", d.ID, line, spans)
	}
}

// TestSelectSince: in this checkout, a changed line selects the defects
// whose site's declaration holds it; a changed file of a probe selects
// that probe, a shared one every probe of its package, the machinery
// every probe; a template nothing.
func TestSelectSince(t *testing.T) {
	root := moduleRoot(t)
	u := Registered()
	src := os.DirFS(root)
	line := SiteLines(root)(report.Defect{ID: "exit_code_lost", Site: "sandbox/run.go"})
	assert.Check(t, line > 1)
	s, err := SelectSince(src, "main", map[string][]lineRange{"sandbox/run.go": {{line, line}}}, u)
	assert.NilError(t, err)
	assert.Check(t, s.Sites["exit_code_lost"])
	assert.Check(t, !s.Sites["traversal_ok"], "a site in another file")
	assert.Check(t, is.Len(s.Probes, 0))

	s, err = SelectSince(src, "main", map[string][]lineRange{"checks/exit_status.go": {{1, 1}}, "attacks/programs/fork_bomb.py": {{3, 3}}}, u)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(s.Probes, map[string]bool{"checks/exit_status": true, "attacks/fork_bomb": true}))
	assert.Check(t, is.Len(s.Sites, 0))

	s, err = SelectSince(src, "main", map[string][]lineRange{"checks/helpers.go": {{1, 1}}}, u)
	assert.NilError(t, err)
	assert.Check(t, is.Len(s.Probes, len(u.Checks)), "every check")

	s, err = SelectSince(src, "main", map[string][]lineRange{"mutants/gate.go": {{1, 1}}}, u)
	assert.NilError(t, err)
	assert.Check(t, is.Len(s.Probes, len(u.Checks)+len(u.Attacks)), "every probe")

	s, err = SelectSince(src, "main", map[string][]lineRange{"report/templates/page.html.tmpl": {{1, 1}}, "README.md": {{1, 1}}}, u)
	assert.NilError(t, err)
	assert.Check(t, is.Len(s.Probes, 0))
	assert.Check(t, is.Len(s.Sites, 0))
}

// TestGitSince: git's answer for a made-up checkout: a changed line in a
// site's function, a changed program, an untracked new check.
func TestGitSince(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	tree := inputsTree()
	tree["sandbox/run.go"].Data = []byte("package sandbox\n\nfunc a() bool {\n\treturn mutants.On(mutants.ExitCodeLost)\n}\n\nfunc b() bool {\n\treturn mutants.On(mutants.FailOpen)\n}\n")
	for name, f := range tree {
		assert.NilError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755))
		assert.NilError(t, os.WriteFile(filepath.Join(root, name), f.Data, 0o644))
	}
	git := func(args ...string) {
		out, err := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...).CombinedOutput()
		assert.NilError(t, err, string(out))
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-qm", "base")
	edit := func(name, old, new string) {
		b, err := os.ReadFile(filepath.Join(root, name))
		assert.NilError(t, err)
		assert.NilError(t, os.WriteFile(filepath.Join(root, name), []byte(strings.Replace(string(b), old, new, 1)), 0o644))
	}
	edit("sandbox/run.go", "func a() bool {\n", "func a() bool {\n\t// a comment\n")
	edit("attacks/programs/y.py", "'y'", "'why'")
	assert.NilError(t, os.WriteFile(filepath.Join(root, "checks/d.go"), []byte("package checks\n"), 0o644))
	u := Universe{Checks: []string{"a", "b", "c", "d"}, Attacks: []string{"x", "y"},
		Defects: []mutants.Defect{{ID: "exit_code_lost", Site: "sandbox/run.go"}, {ID: "fail_open", Site: "sandbox/run.go"}}}
	s, err := GitSince(context.Background(), root, "HEAD", u)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(s.Sites, map[string]bool{"exit_code_lost": true}))
	assert.Check(t, is.DeepEqual(s.Probes, map[string]bool{"attacks/y": true, "checks/d": true}))

	_, err = GitSince(context.Background(), root, "no-such-rev", u)
	assert.Check(t, is.ErrorContains(err, "no-such-rev"))
}

// TestRunnerSince: a diff-scoped run runs the defects whose site changed
// and those a changed probe reaches, says it is partial, and its gate
// covers only those.
func TestRunnerSince(t *testing.T) {
	f := &fakes{results: treeResults(sourceTree()), reach: incrementalReach}
	r := &Runner{Worker: f.worker(t), Predictions: predictions(t, nil), Only: slices.Sorted(maps.Keys(incrementalReach)),
		Jobs: 4, Timeout: 10 * time.Second, FailOn: verdict.FailOnEscape,
		Since: &Since{Rev: "main", Sites: map[string]bool{"fail_open": true}, Probes: map[string]bool{"checks/file_links": true}}}
	m, err := r.Run(context.Background())
	assert.NilError(t, err)
	var ids []string
	for _, d := range m.Defects {
		ids = append(ids, d.ID)
	}
	assert.Check(t, is.DeepEqual(ids, []string{"fail_open", "traversal_ok", "links_followed"}))
	assert.Check(t, is.DeepEqual(m.Run.Partial, &report.Partial{Since: "main", Sites: []string{"fail_open"}, Probes: []string{"checks/file_links"}, Of: 5}))
	assert.Check(t, is.Equal(m.Summary.Defects, 3), "the summary counts what ran")
	assert.Check(t, is.Len(f.asked["exit_code_lost"], 0))
	var b strings.Builder
	assert.NilError(t, report.WriteWith(&b, report.Text, m, report.Options{}))
	assert.Check(t, is.Contains(b.String(), "for this partial run only (--since main: 3 of 5 defects ran)"))
	assert.Check(t, is.Contains(b.String(), "PARTIAL RUN (--since main)"))
	dir := t.TempDir()
	_, err = report.WriteAll(dir, "mutate", m)
	assert.NilError(t, err)
	assert.Check(t, reporttest.CrossCheck(dir))
}
