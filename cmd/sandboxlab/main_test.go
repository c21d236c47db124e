package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/icmd"

	"sandboxlab/mutants"
	"sandboxlab/report"
)

// bin is the sandboxlab binary built for these tests. Its directory is
// world-searchable: the sandbox re-executes the binary as its init under
// an unprivileged host uid, which must reach it.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sandboxlab-cli-test-")
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "making the binary's directory:", err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "sandboxlab")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building sandboxlab: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run runs the binary with a clean view of CI: not under GitHub Actions
// unless env says so.
func run(t *testing.T, env []string, args ...string) *icmd.Result {
	t.Helper()
	base := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GITHUB_ACTIONS=") {
			base = append(base, kv)
		}
	}
	// No icmd.WithTimeout: passed to RunCmd it is applied to a copy and
	// never takes effect (gotest.tools v3.5.2). go test's -timeout bounds
	// every command, the full mutation run included.
	return icmd.RunCmd(icmd.Command(bin, args...), icmd.WithEnv(append(base, env...)...))
}

// cheapChecks are two checks that take well under a second.
const cheapChecks = "exit_status,names_absolute"

// TestOutWritesEveryFormat: --out writes the four files, stdout gets
// --format, and the file of that format is byte for byte what stdout got.
func TestOutWritesEveryFormat(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "reports")
	res := run(t, nil, "check", "--only", cheapChecks, "--format", "junit", "--out", dir)
	res.Assert(t, icmd.Success)
	for _, f := range report.Formats {
		_, err := os.Stat(filepath.Join(dir, "check."+f.Ext()))
		assert.Check(t, err, f)
	}
	junit, err := os.ReadFile(filepath.Join(dir, "check.junit.xml"))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(res.Stdout(), string(junit)))
	var suites report.TestSuites
	assert.NilError(t, xml.Unmarshal(junit, &suites))
	assert.Check(t, is.Equal(suites.Tests, 2))
	assert.Check(t, is.Equal(suites.Failures, 0))

	var checks report.Checks
	data, err := os.ReadFile(filepath.Join(dir, "check.json"))
	assert.NilError(t, err)
	assert.NilError(t, json.Unmarshal(data, &checks))
	assert.Check(t, is.Equal(checks.Passed, 2))
	md, err := os.ReadFile(filepath.Join(dir, "check.md"))
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(md), "| exit_status "))
	assert.Check(t, is.Contains(string(md), "2 passed, 0 failed"))
}

// TestFormatFlag: every report command takes every format and rejects
// an unknown one before running anything.
func TestFormatFlag(t *testing.T) {
	for _, args := range [][]string{{"check"}, {"attack"}, {"mutate"}, {"agent"}, {"experiment", "all"}} {
		name := args[0]
		help := run(t, nil, append(args, "--help")...)
		help.Assert(t, icmd.Success)
		for _, want := range []string{"-format FORMAT", "text, markdown, json, junit", "-out DIR", name + ".txt, .md, .json and .junit.xml", "-quiet", "-verbose"} {
			assert.Check(t, is.Contains(help.Stderr(), want), name)
		}
		bad := run(t, nil, append(args, "--format", "xml")...)
		bad.Assert(t, icmd.Expected{ExitCode: 1, Err: `sandboxlab ` + name})
		assert.Check(t, is.Contains(bad.Stderr(), `--format: unknown format "xml" (want text, markdown, json, junit)`), name)
		both := run(t, nil, append(args, "--quiet", "--verbose")...)
		both.Assert(t, icmd.Expected{ExitCode: 1, Err: "--quiet and --verbose: choose one"})
	}
}

// TestProgress: silent when stderr is not a terminal, one counted line
// per check with --verbose, nothing with --quiet.
func TestProgress(t *testing.T) {
	res := run(t, nil, "check", "--only", cheapChecks, "--format", "json")
	res.Assert(t, icmd.Success)
	assert.Check(t, is.Equal(res.Stderr(), ""), "not a terminal: no progress")

	res = run(t, nil, "check", "--only", cheapChecks, "--format", "json", "--verbose")
	res.Assert(t, icmd.Success)
	assert.Check(t, is.Regexp(`(?m)^\[1/2\] exit_status +pass \(\d+ ms\)\n\[2/2\] names_absolute +pass`, res.Stderr()))
	var checks report.Checks
	assert.Check(t, json.Unmarshal([]byte(res.Stdout()), &checks), "stdout is still only JSON")

	res = run(t, nil, "check", "--only", "exit_status", "--quiet")
	res.Assert(t, icmd.Success)
	assert.Check(t, is.Equal(res.Stderr(), ""))
}

// TestSiteLines finds the planted site of every registered defect in this
// checkout, as the annotations do: the line holds the defect's gate call.
func TestSiteLines(t *testing.T) {
	root := moduleRoot(".")
	assert.Assert(t, root != "", "no sandboxlab module above the test's directory")
	for _, d := range mutants.All {
		n, err := report.SiteLine(root, d.Site, string(d.ID))
		if !assert.Check(t, err, d.ID) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, d.Site))
		assert.NilError(t, err)
		line := strings.Split(string(data), "\n")[n-1]
		assert.Check(t, is.Contains(line, "mutants.On(mutants."), "%s: %s:%d", d.ID, d.Site, n)
	}
}
