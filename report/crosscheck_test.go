package report_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/report"
	"sandboxlab/report/reporttest"
	"sandboxlab/verdict"
)

// These tests read the reports back as their readers do, through
// reporttest: the cross-check of every format of a mutation report, and
// the tables of a text or markdown rendering.

// render returns r in format f.
func render(t *testing.T, f report.Format, r report.Report) string {
	t.Helper()
	var b bytes.Buffer
	assert.NilError(t, report.Write(&b, f, r), "rendering %s", f)
	return b.String()
}

// TestMarkdownEscapes checks that a '|' or a line break in a cell stays
// inside its cell.
func TestMarkdownEscapes(t *testing.T) {
	out := render(t, report.Markdown, report.FixtureChecks())
	assert.Check(t, is.Contains(out, `TimedOut false \| reason timeout<br>second line`))
	tables := reporttest.Tables(out, true)
	assert.Assert(t, is.Len(tables, 1))
	for _, row := range tables[0] {
		assert.Check(t, is.Len(row, 6), "row %q", row)
	}
	assert.Check(t, is.Contains(render(t, report.Markdown, report.FixtureAgent()), `a variable that \| does not survive`))
}

// TestAllFormatsAgree renders one Mutation in every format with WriteAll
// and cross-checks the files: the same defects, outcomes and counts.
func TestAllFormatsAgree(t *testing.T) {
	for name, m := range map[string]*report.Mutation{"mutation": report.FixtureMutation(), "broken": report.FixtureMutationBroken(),
		"suites": report.FixtureSuitesMutation(), "suites, hardening broken": report.FixtureSuitesMutationBroken()} {
		dir := t.TempDir()
		paths, err := report.WriteAll(filepath.Join(dir, "reports"), "mutate", m)
		assert.NilError(t, err)
		assert.Check(t, is.Len(paths, len(report.FormatsOf(m))))
		for _, p := range paths {
			_, err := os.Stat(p + ".tmp")
			assert.Check(t, os.IsNotExist(err), "%s left behind", p+".tmp")
		}
		assert.NilError(t, reporttest.CrossCheck(filepath.Join(dir, "reports")), name)
	}

	// The facts themselves, read from each format.
	m := report.FixtureMutation()
	dir := t.TempDir()
	_, err := report.WriteAll(dir, "mutate", m)
	assert.NilError(t, err)
	var back report.Mutation
	data, err := os.ReadFile(filepath.Join(dir, "mutate.json"))
	assert.NilError(t, err)
	assert.NilError(t, json.Unmarshal(data, &back))
	assert.Check(t, is.DeepEqual(back.Summary, report.Summary{Defects: 9, Caught: 6, Escaped: 2, Exact: 3, TooWide: 1, Extra: 2, Hung: 1, Unexpected: 4, UnexpectedEscapes: 3}))
	for _, f := range []report.Format{report.Text, report.Markdown} {
		data, err := os.ReadFile(filepath.Join(dir, "mutate."+f.Ext()))
		assert.NilError(t, err)
		tables := reporttest.Tables(string(data), f == report.Markdown)
		defects := reporttest.FindTable(tables, "defect")
		assert.Assert(t, defects != nil, f)
		var ids, outcomes []string
		for _, row := range defects[1:] {
			ids, outcomes = append(ids, row[0]), append(outcomes, row[3])
		}
		assert.Check(t, is.DeepEqual(ids, []string{"timeout_hidden", "exit_code_lost", "traversal_ok", "no_net_ns", "caps_kept", "no_pid_ns", "quota_ignored", "fresh_dir_per_run", "no_sweep"}), f)
		assert.Check(t, is.DeepEqual(outcomes, outcomeNames(verdict.TooWide, verdict.Extra, verdict.Escaped, verdict.Exact, verdict.Extra, verdict.Exact, verdict.Escaped, verdict.Hung, verdict.Exact)), f)
		assert.Check(t, is.DeepEqual(reporttest.FindTable(tables, "defects")[1], []string{"9", "6", "2", "3", "1", "2", "0", "1", "4", "fail"}), f)
	}
	data, err = os.ReadFile(filepath.Join(dir, "mutate.junit.xml"))
	assert.NilError(t, err)
	var s report.TestSuites
	assert.NilError(t, xml.Unmarshal(data, &s))
	assert.Check(t, is.Equal(s.Tests, 10))
	assert.Check(t, is.Equal(s.Failures, 3), "caps_kept, no_pid_ns, quota_ignored")
	assert.Check(t, is.Equal(s.Errors, 1), "fresh_dir_per_run hung")
	assert.Check(t, is.Equal(s.Skipped, 1), "only the known escape is skipped: the other known divergences were caught")
	assert.Check(t, is.Equal(s.Failures+s.Errors, back.Summary.Unexpected))
}

// TestCrossCheckCatches tampers with one file at a time and expects
// CrossCheck to name the disagreement.
func TestCrossCheckCatches(t *testing.T) {
	for _, tc := range []struct {
		file, from, to, want string
	}{
		{"mutate.md", "| no_sweep ", "| no_sweeps ", "defect no_sweep is missing"},
		{"mutate.txt", "│ exact    │ exfiltrate", "│ extra    │ exfiltrate", "defect no_net_ns: outcome \"extra\", the JSON says \"exact\""},
		{"mutate.txt", "│ too wide │", "│ too_wide │", "summary header"},
		{"mutate.junit.xml", `<skipped message="known escaped: equivalent mutant; the link guard (openat2 RESOLVE_BENEATH) refuses the same names, so no check can fail"></skipped>`,
			`<failure type="x" message="y"></failure>`, "defect traversal_ok is failed, want skipped"},
		{"mutate.junit.xml", `name="mutate" tests="10"`, `name="mutate" tests="11"`, "testsuite says tests=11"},
		{"mutate.json", `"caught": 6`, `"caught": 7`, "but its defects tally to"},
		{"mutate.json", `"gate": "fail"`, `"gate": "pass"`, "the gate is pass, but under --fail-on escape the run's results give fail"},
		{"mutate.md", "| 9       |", "| 8       |", "summary row"},
		{"mutate.html", `data-defect="caps_kept" data-outcome="extra"`, `data-defect="caps_kept" data-outcome="exact"`,
			`defect caps_kept: outcome "exact" on the page, the JSON says "extra"`},
		{"mutate.html", "The gate fails: unexpected results for", "The gate holds despite unexpected results for", "the page does not say"},
		{"mutate.stryker.json", `"status": "Killed",
          "statusReason": "outcome extra`, `"status": "Survived",
          "statusReason": "outcome extra`, "mutant caps_kept is Survived, want Killed"},
	} {
		dir := t.TempDir()
		_, err := report.WriteAll(dir, "mutate", report.FixtureMutation())
		assert.NilError(t, err)
		path := filepath.Join(dir, tc.file)
		data, err := os.ReadFile(path)
		assert.NilError(t, err)
		assert.Assert(t, bytes.Contains(data, []byte(tc.from)), "%s has no %q", tc.file, tc.from)
		data = bytes.Replace(data, []byte(tc.from), []byte(tc.to), 1)
		assert.NilError(t, os.WriteFile(path, data, 0o644))
		assert.Check(t, is.ErrorContains(reporttest.CrossCheck(dir), tc.want), "%s: %s → %s", tc.file, tc.from, tc.to)
	}
	assert.Check(t, is.ErrorContains(reporttest.CrossCheck(t.TempDir()), "mutate.json"))

	// The same with two suites: each suite's tables and test suite.
	for _, tc := range []struct {
		file, from, to, want string
	}{
		{"mutate.md", "| vault_open ", "| vault_opened ", "defect vault_open is missing"},
		{"mutate.txt", "│ 2       │ 1      │ 1       │ 1     │", "│ 2       │ 2      │ 1       │ 1     │", "summary row"},
		{"mutate.junit.xml", `name="mutate.hardening"`, `name="mutate-hardening"`, `testsuite 2 is named "mutate-hardening", want "mutate.hardening"`},
		{"mutate.junit.xml", `name="mutate.hardening" tests="3"`, `name="mutate.hardening" tests="4"`, "testsuite mutate.hardening: testsuite says tests=4"},
		{"mutate.json", `"gate": "pass"`, `"gate": "fail"`, "suite hardening: the gate is fail, but under --fail-on escape its results give pass"},
		{"mutate.json", `"suite": "hardening",
      "summary": "the vault's door is left open at L6"`, `"suite": "extra",
      "summary": "the vault's door is left open at L6"`, "defect vault_open is of suite extra, which has no entry in suites"},
	} {
		dir := t.TempDir()
		_, err := report.WriteAll(dir, "mutate", report.FixtureSuitesMutation())
		assert.NilError(t, err)
		path := filepath.Join(dir, tc.file)
		data, err := os.ReadFile(path)
		assert.NilError(t, err)
		assert.Assert(t, bytes.Contains(data, []byte(tc.from)), "%s has no %q", tc.file, tc.from)
		data = bytes.Replace(data, []byte(tc.from), []byte(tc.to), 1)
		assert.NilError(t, os.WriteFile(path, data, 0o644))
		assert.Check(t, is.ErrorContains(reporttest.CrossCheck(dir), tc.want), "%s: %s → %s", tc.file, tc.from, tc.to)
	}
}

// TestTextWrapKeepsFacts: a mutation report wrapped to 60 columns still
// reads back, through the cross-check's parser, as the same tables as at
// full width.
func TestTextWrapKeepsFacts(t *testing.T) {
	for name, m := range map[string]*report.Mutation{"mutation": report.FixtureMutation(), "suites": report.FixtureSuitesMutation()} {
		var narrow strings.Builder
		assert.NilError(t, report.WriteWith(&narrow, report.Text, m, report.Options{Width: 60}))
		var wide strings.Builder
		assert.NilError(t, report.WriteWith(&wide, report.Text, m, report.Options{Width: 1 << 20}))
		assert.Check(t, narrow.String() != wide.String(), "%s: nothing wrapped at 60 columns", name)
		assert.Check(t, is.DeepEqual(reporttest.Tables(narrow.String(), false), reporttest.Tables(wide.String(), false)), name)
	}
}

func outcomeNames(os ...verdict.Outcome) []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = string(o)
	}
	return out
}
