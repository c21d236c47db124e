package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"
)

// render returns r in format f.
func render(t *testing.T, f Format, r Report) string {
	t.Helper()
	var b bytes.Buffer
	assert.NilError(t, Write(&b, f, r), "rendering %s", f)
	return b.String()
}

// renderWide returns r in format f with text tables as wide as they
// come: for tests of what a report says, not of how it wraps.
func renderWide(t *testing.T, f Format, r Report) string {
	t.Helper()
	var b bytes.Buffer
	assert.NilError(t, WriteWith(&b, f, r, Options{Width: 1 << 20}), "rendering %s", f)
	return b.String()
}

// TestGolden renders every report in every format and compares it with
// testdata/<name>.<ext>.golden; `go test ./report -update` rewrites them.
func TestGolden(t *testing.T) {
	reports := []struct {
		name string
		r    Report
	}{
		{"checks", fixtureChecks()},
		{"attacks", fixtureAttacks(true)},
		{"attacks_defect", fixtureAttacksWithDefect()},
		{"attacks_no_expected", fixtureAttacks(false)},
		{"mutation", fixtureMutation()},
		{"mutation_broken", fixtureMutationBroken()},
		{"checks_suites", fixtureSuitesChecks()},
		{"attacks_suites", fixtureSuitesAttacks(false)},
		{"mutation_suites", fixtureSuitesMutation()},
		{"agent", fixtureAgent()},
		{"experiment", fixtureExperiments()[1]},
		{"experiments", fixtureExperiments()},
	}
	for _, rep := range reports {
		for _, f := range Formats {
			t.Run(rep.name+"/"+string(f), func(t *testing.T) {
				golden.Assert(t, render(t, f, rep.r), rep.name+"."+f.Ext()+".golden")
			})
		}
	}
}

// TestJUnitParses checks every report's JUnit output: it is XML that
// encoding/xml reads back, the root names testsuites, and each count is
// the count of its testcases.
func TestJUnitParses(t *testing.T) {
	for name, r := range map[string]Report{
		"checks": fixtureChecks(), "attacks": fixtureAttacks(true), "attacks_defect": fixtureAttacksWithDefect(),
		"mutation": fixtureMutation(), "mutation_broken": fixtureMutationBroken(), "agent": fixtureAgent(), "experiments": fixtureExperiments(),
		"checks_suites": fixtureSuitesChecks(), "attacks_suites": fixtureSuitesAttacks(false), "mutation_suites": fixtureSuitesMutation(),
	} {
		out := render(t, JUnit, r)
		assert.Check(t, strings.HasPrefix(out, `<?xml version="1.0" encoding="UTF-8"?>`), name)
		var s TestSuites
		assert.NilError(t, xml.Unmarshal([]byte(out), &s), name)
		assert.Check(t, is.Equal(s.XMLName.Local, "testsuites"), name)
		var tests, failures, errs, skipped int
		for _, suite := range s.Suites {
			n := map[string]int{}
			for _, c := range suite.Cases {
				n[c.Status()]++
				assert.Check(t, c.Name != "" && c.ClassName != "" && c.Time != "", "%s: a testcase lacks name, classname or time", name)
			}
			assert.Check(t, is.Equal(suite.Tests, len(suite.Cases)), name)
			assert.Check(t, is.Equal(suite.Failures, n["failed"]), name)
			assert.Check(t, is.Equal(suite.Errors, n["error"]), name)
			assert.Check(t, is.Equal(suite.Skipped, n["skipped"]), name)
			tests, failures, errs, skipped = tests+suite.Tests, failures+suite.Failures, errs+suite.Errors, skipped+suite.Skipped
		}
		assert.Check(t, is.Equal(s.Tests, tests), name)
		assert.Check(t, is.Equal(s.Failures, failures), name)
		assert.Check(t, is.Equal(s.Errors, errs), name)
		assert.Check(t, is.Equal(s.Skipped, skipped), name)
	}
}

// TestJUnitVerdicts pins which cases fail: a failed check; a cell that
// escaped at or above its expected level (and none without Expected); an
// agent row that differs from its expectation.
func TestJUnitVerdicts(t *testing.T) {
	status := func(s *TestSuites) map[string]string {
		out := map[string]string{}
		for _, suite := range s.Suites {
			for _, c := range suite.Cases {
				out[c.Name] = c.Status()
			}
		}
		return out
	}
	c := status(fixtureChecks().JUnit())
	assert.Check(t, is.Equal(c["timeout_flag"], "failed"))
	assert.Check(t, is.Equal(c["wall_timeout"], "passed"))

	a := fixtureAttacksWithDefect().JUnit()
	assert.Check(t, is.DeepEqual(status(a), map[string]string{
		"exfiltrate@L3": "passed", "exfiltrate@L4": "failed", "exfiltrate@L5": "failed",
		"read_ssh_key@L3": "passed", "read_ssh_key@L4": "passed", "read_ssh_key@L5": "passed",
	}))
	assert.Check(t, is.Equal(fixtureAttacks(true).JUnit().Failures, 0), "the correct sandbox's matrix fails nothing")
	noExp := fixtureAttacksWithDefect()
	noExp.Expected = nil
	assert.Check(t, is.Equal(noExp.JUnit().Failures, 0), "without Expected no cell is judged")

	g := status(fixtureAgent().JUnit())
	assert.Check(t, is.Equal(g["memory/careful"], "failed"))
	assert.Check(t, is.Equal(g["typo/naive"], "passed"), "not solved, as the notes expect")
	assert.Check(t, is.Equal(g["state/careful (vague description)"], "passed"))

	m := status(fixtureMutation().JUnit())
	assert.Check(t, is.DeepEqual(m, map[string]string{
		"baseline": "passed", "timeout_hidden": "passed", "exit_code_lost": "passed", "traversal_ok": "skipped",
		"no_net_ns": "passed", "caps_kept": "failed", "no_pid_ns": "failed", "quota_ignored": "failed",
		"fresh_dir_per_run": "error", "no_sweep": "passed",
	}))
	assert.Check(t, is.Equal(status(fixtureMutationBroken().JUnit())["baseline"], "failed"))

	// Each suite is a test suite; the course's keeps the name it had
	// before there were suites.
	names := func(s *TestSuites) []string {
		var out []string
		for _, suite := range s.Suites {
			out = append(out, suite.Name)
		}
		return out
	}
	assert.Check(t, is.DeepEqual(names(fixtureMutation().JUnit()), []string{"mutate"}))
	ms := fixtureSuitesMutation().JUnit()
	assert.Check(t, is.DeepEqual(names(ms), []string{"mutate", "mutate.hardening"}))
	assert.Check(t, is.Equal(ms.Suites[1].Tests, 3), "its own baseline and its two defects")
	assert.Check(t, is.Equal(ms.Suites[1].Cases[2].Status(), "skipped"), "vault_ajar, a known escape")
	assert.Check(t, is.DeepEqual(names(fixtureSuitesChecks().JUnit()), []string{"check", "check.hardening"}))
	as := fixtureSuitesAttacks(false).JUnit()
	assert.Check(t, is.DeepEqual(names(as), []string{"attack", "attack.hardening"}))
	assert.Check(t, is.Equal(as.Suites[0].Tests, 96), "the course's matrix is L0–L5 in a run of L0–L6")
	assert.Check(t, is.Equal(status(as)["vault_tunnel@L5"], "failed"))
	assert.Check(t, is.Equal(status(as)["vault_raid@L6"], "passed"))
}

// TestJSONKeys pins the JSON keys other code and tests rely on; golden
// files alone would follow a rename with -update.
func TestJSONKeys(t *testing.T) {
	keys := func(r Report) map[string]any {
		var v map[string]any
		assert.NilError(t, json.Unmarshal([]byte(render(t, JSON, r)), &v))
		return v
	}
	has := func(v map[string]any, ks ...string) {
		t.Helper()
		for _, k := range ks {
			_, ok := v[k]
			assert.Check(t, ok, "missing key %q in %v", k, v)
		}
	}
	c := keys(fixtureChecks())
	has(c, "checks", "passed", "failed", "identity")
	has(c["checks"].([]any)[0].(map[string]any), "id", "promise", "level", "passed", "evidence", "ms")

	a := keys(fixtureAttacks(true))
	has(a, "identity", "cells", "first_stopped", "expected")
	has(a["identity"].(map[string]any), "uid", "root", "program_uid")
	has(a["cells"].([]any)[0].(map[string]any), "attack", "level", "escaped", "stopped_by", "evidence", "ms")

	m := keys(fixtureMutation())
	has(m, "baseline", "defects", "summary", "gate")
	has(m["defects"].([]any)[0].(map[string]any), "id", "failed_checks", "predicted_checks", "outcome", "escaped_attacks", "predicted_attacks", "known", "ms")
	has(m["summary"].(map[string]any), "defects", "caught", "escaped", "exact", "too_wide", "extra", "different", "unexpected")

	ms := keys(fixtureSuitesMutation())
	has(ms, "suites")
	has(ms["suites"].([]any)[1].(map[string]any), "suite", "baseline_ok", "problems", "summary", "gate")
	has(ms["defects"].([]any)[0].(map[string]any), "suite")
	has(ms["baseline"].(map[string]any)["checks"].(map[string]any)["checks"].([]any)[0].(map[string]any), "suite")
	has(keys(fixtureSuitesAttacks(true)), "suites")

	g := keys(fixtureAgent())
	has(g, "rows", "vague")
	has(g["rows"].([]any)[0].(map[string]any), "task", "tool", "solved", "calls")
}

// TestJSONRoundTrip reads each report's JSON back into its type and gets
// the same value: JSON carries every fact of the model.
func TestJSONRoundTrip(t *testing.T) {
	check := func(in Report, out Report) {
		t.Helper()
		assert.NilError(t, json.Unmarshal([]byte(render(t, JSON, in)), out))
		assert.Check(t, is.DeepEqual(out, in))
	}
	check(fixtureChecks(), &Checks{})
	check(fixtureAttacks(true), &Attacks{})
	check(fixtureMutation(), &Mutation{})
	check(fixtureSuitesChecks(), &Checks{})
	check(fixtureSuitesAttacks(false), &Attacks{})
	check(fixtureSuitesMutation(), &Mutation{})
	check(fixtureAgent(), &Agent{})
	exps := fixtureExperiments()
	check(&exps, &Experiments{})
}

// TestCoursePartUnchanged: in a report of both suites, the course's part
// renders exactly as a report of the course alone, its baseline's time
// aside (with two suites each part gives its own share of the baseline),
// and the course's matrix keeps its six levels when the run had more.
func TestCoursePartUnchanged(t *testing.T) {
	baselineTime := regexp.MustCompile(`\(\d+ s for the checks and the matrix\)`)
	for _, f := range []Format{Text, Markdown} {
		heading := map[Format]string{Text: "Hardening suite\n===", Markdown: "## Hardening suite\n"}[f]
		coursePart := func(r Report) string {
			t.Helper()
			out := renderWide(t, f, r)
			i := strings.Index(out, heading)
			assert.Assert(t, i > 0, "%s: no hardening part", f)
			return strings.TrimSuffix(out[:i], "\n")
		}
		course := fixtureMutation()
		course.Baseline.Attacks.Expected = nil // as the two-suite fixture has it
		assert.Check(t, is.Equal(baselineTime.ReplaceAllString(coursePart(fixtureSuitesMutation()), "(T)"),
			baselineTime.ReplaceAllString(renderWide(t, f, course), "(T)")), f)
		assert.Check(t, is.Equal(coursePart(fixtureSuitesChecks()), renderWide(t, f, fixtureChecks())), f)
		assert.Check(t, is.Equal(coursePart(fixtureSuitesAttacks(true)), renderWide(t, f, fixtureAttacks(true))), f)
	}
}

// TestSuiteBaselineBroken: a suite whose baseline is broken says so in
// its own part; the gate's sentence names it.
func TestSuiteBaselineBroken(t *testing.T) {
	m := fixtureSuitesMutationBroken()
	out := renderWide(t, Text, m)
	assert.Check(t, is.Contains(out, "The hardening suite's baseline is broken, so none of its defects was run:\n- check vault_logged fails on the correct sandbox"))
	assert.Check(t, !strings.Contains(out, "The baseline is broken"), "the course's baseline holds")
	assert.Check(t, is.Contains(out, "The gate fails: the baseline of the hardening suite is broken; unexpected results for caps_kept, no_pid_ns, quota_ignored, fresh_dir_per_run (--fail-on"))
	assert.Check(t, !strings.Contains(out, "Hardening defects"), "none of its defects ran")
	assert.Check(t, is.Contains(out, "Checks on the correct sandbox: 1 passed, 1 failed"))
	status := map[string]string{}
	for _, s := range m.JUnit().Suites {
		for _, c := range s.Cases {
			status[s.Name+"/"+c.Name] = c.Status()
		}
	}
	assert.Check(t, is.Equal(status["mutate/baseline"], StatusPassed))
	assert.Check(t, is.Equal(status["mutate.hardening/baseline"], StatusFailed))
}

func TestParseFormat(t *testing.T) {
	for _, f := range Formats {
		got, err := ParseFormat(string(f))
		assert.Check(t, err)
		assert.Check(t, is.Equal(got, f))
	}
	_, err := ParseFormat("xml")
	assert.Check(t, is.ErrorContains(err, `unknown format "xml" (want text, markdown, json, junit)`))
}
