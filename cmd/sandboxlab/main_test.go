package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/icmd"
	"gotest.tools/v3/skip"

	"sandboxlab/attacks"
	"sandboxlab/checks"
	"sandboxlab/harness/gosource"
	"sandboxlab/mutants"
	"sandboxlab/report"
	"sandboxlab/verdict"
)

// bin is the sandboxlab binary built for these tests, with
// sandboxlab-harness and sandboxlab-init beside it, as make build ships
// them. Their directory is world-searchable: the sandbox starts the
// init under an unprivileged host uid, which must reach it.
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
	build := exec.Command("go", "build", "-o", dir+"/", ".", "../sandboxlab-harness", "../sandboxlab-init")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
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

// TestOutWritesEveryFormat: --out writes the five files, stdout gets
// --format, and the file of that format is byte for byte what stdout got.
func TestOutWritesEveryFormat(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "reports")
	res := run(t, nil, "check", "--only", cheapChecks, "--format", "junit", "--out", dir)
	res.Assert(t, icmd.Success)
	for _, f := range append(report.Formats, report.HTML) {
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

// TestFormatFlag: every report command takes every format its report
// has (mutate merge those of mutate) and rejects an unknown one before
// running anything; those that show progress take --quiet or --verbose,
// not both.
func TestFormatFlag(t *testing.T) {
	extra := map[string]string{"check": ", html", "attack": ", html, sarif", "mutate": ", html, stryker, sarif", "mutate merge": ", html, stryker, sarif"}
	for _, args := range [][]string{{"check"}, {"attack"}, {"mutate"}, {"mutate", "merge"}, {"agent"}, {"experiment", "all"}} {
		name := strings.Join(args, " ")
		if args[0] == "experiment" {
			name = "experiment"
		}
		help := run(t, nil, append(args, "--help")...)
		help.Assert(t, icmd.Success)
		for _, want := range []string{"-format FORMAT", "text, markdown, json, junit" + extra[name], "-out DIR", args[0] + ".txt, .md, .json and .junit.xml"} {
			assert.Check(t, is.Contains(help.Stderr(), want), name)
		}
		bad := run(t, nil, append(args, "--format", "xml")...)
		bad.Assert(t, icmd.Expected{ExitCode: 1, Err: `sandboxlab ` + name + ": "})
		assert.Check(t, is.Contains(bad.Stderr(), `--format: unknown format "xml" (want text, markdown, json, junit`+extra[name]+`)`), name)
		both := run(t, nil, append(args, "--quiet", "--verbose")...)
		if args[0] == "agent" || name == "mutate merge" { // no progress, so neither flag
			both.Assert(t, icmd.Expected{ExitCode: 1, Err: "flag provided but not defined: -quiet"})
			continue
		}
		assert.Check(t, is.Contains(help.Stderr(), "-quiet"), name)
		assert.Check(t, is.Contains(help.Stderr(), "-verbose"), name)
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
	root := moduleRoot(t)
	assert.Assert(t, root != "", "no sandboxlab module above the test's directory")
	for _, d := range mutants.All {
		sites, err := gosource.Locate(os.DirFS(root), d.Site, string(d.ID))
		if !assert.Check(t, err, d.ID) {
			continue
		}
		n := sites[0].Start.Line
		data, err := os.ReadFile(filepath.Join(root, d.Site))
		assert.NilError(t, err)
		line := strings.Split(string(data), "\n")[n-1]
		assert.Check(t, is.Contains(line, "mutants.On(mutants."), "%s: %s:%d", d.ID, d.Site, n)
	}
}

// TestSuiteFlag: check, attack and mutate take --suite course, hardening
// or all; anything else is a usage error that names the choices, before
// anything runs. An --only id of a suite not chosen is refused.
func TestSuiteFlag(t *testing.T) {
	for _, name := range []string{"check", "attack", "mutate"} {
		help := run(t, nil, name, "--help")
		help.Assert(t, icmd.Success)
		assert.Check(t, is.Contains(help.Stderr(), "-suite SUITE"), name)
		assert.Check(t, is.Contains(help.Stderr(), "course, hardening, all"), name)
		bad := run(t, nil, name, "--suite", "courses")
		bad.Assert(t, icmd.Expected{ExitCode: 1, Err: "sandboxlab " + name + ": --suite: "})
		assert.Check(t, is.Contains(bad.Stderr(), `unknown suite "courses" (want course, hardening or all)`), name)
	}
	run(t, nil, "check", "--suite", "hardening", "--only", "exit_status").Assert(t, icmd.Expected{ExitCode: 1,
		Err: "check exit_status is in the course suite, which is not selected (suites: hardening)"})
	run(t, nil, "attack", "--suite", "hardening", "--only", "exfiltrate").Assert(t, icmd.Expected{ExitCode: 1,
		Err: "attack exfiltrate is in the course suite, which is not selected (suites: hardening)"})
	run(t, nil, "mutate", "--suite", "hardening", "--only", "no_net_ns").Assert(t, icmd.Expected{ExitCode: 1,
		Err: "defect no_net_ns is in the course suite, which is not selected (suites: hardening)"})
	run(t, nil, "mutate", "--suite", "course", "--replay", "x.json").Assert(t, icmd.Expected{ExitCode: 1,
		Err: "--replay judges the earlier run as it was"})

	res := run(t, nil, "check", "--suite", "course", "--only", cheapChecks, "--format", "json")
	res.Assert(t, icmd.Success)
	var rep report.Checks
	assert.NilError(t, json.Unmarshal([]byte(res.Stdout()), &rep))
	assert.Check(t, is.Equal(rep.Passed, 2))
	for _, c := range rep.Checks {
		assert.Check(t, is.Equal(c.Suite, verdict.Course), "every check in the JSON names its suite")
	}
}

// TestEmptySuite: a suite with no members gives an empty report and
// exit 0, for each command.
func TestEmptySuite(t *testing.T) {
	hardening := []verdict.Suite{verdict.Hardening}
	list, err := checks.Select(nil, hardening)
	assert.NilError(t, err)
	cells, err := attacks.Options{Suites: hardening}.Cells()
	assert.NilError(t, err)
	skip.If(t, len(list) > 0 || cells > 0, "the hardening suite has members")

	res := run(t, nil, "check", "--suite", "hardening", "--format", "json")
	res.Assert(t, icmd.Success)
	var c report.Checks
	assert.NilError(t, json.Unmarshal([]byte(res.Stdout()), &c))
	assert.Check(t, is.Len(c.Checks, 0))
	run(t, nil, "check", "--suite", "hardening").Assert(t, icmd.Expected{ExitCode: 0, Out: "0 passed, 0 failed"})

	res = run(t, nil, "attack", "--suite", "hardening", "--format", "json")
	res.Assert(t, icmd.Success)
	var a report.Attacks
	assert.NilError(t, json.Unmarshal([]byte(res.Stdout()), &a))
	assert.Check(t, is.Len(a.Cells, 0))

	for _, d := range mutants.All {
		skip.If(t, d.Suite == verdict.Hardening, "the hardening suite has defects")
	}
	res = run(t, nil, "mutate", "--suite", "hardening", "--format", "json")
	res.Assert(t, icmd.Success)
	var m report.Mutation
	assert.NilError(t, json.Unmarshal([]byte(res.Stdout()), &m))
	assert.Check(t, m.Baseline.OK)
	assert.Check(t, is.Len(m.Defects, 0))
	assert.Check(t, is.Equal(m.Gate, verdict.Pass))
}

// moduleRoot is the directory of the sandboxlab module, two above this
// test's.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	assert.NilError(t, err)
	_, err = os.Stat(filepath.Join(root, "predictions.yaml"))
	assert.NilError(t, err, "not in the sandboxlab module")
	return root
}

// TestShippedBinariesHaveNoTestLibrary: the binaries as built list no
// module made for tests (go version -m reads what the linker recorded).
func TestShippedBinariesHaveNoTestLibrary(t *testing.T) {
	for _, name := range []string{"sandboxlab", "sandboxlab-harness", "sandboxlab-init"} {
		out, err := exec.Command("go", "version", "-m", filepath.Join(filepath.Dir(bin), name)).CombinedOutput()
		assert.NilError(t, err, "%s", out)
		assert.Check(t, is.Contains(string(out), "golang.org/x/sys"), "%s: go version -m lists the modules", name)
		for _, mod := range []string{"gotest.tools", "github.com/google/go-cmp", "github.com/santhosh-tekuri/jsonschema"} {
			assert.Check(t, !strings.Contains(string(out), mod), "%s links %s", name, mod)
		}
	}
}

// TestCLILinksNoProxy: sandboxlab links neither the egress proxy's
// server nor the HTTP, TLS and crypto code it needs, whose initialisers
// every start of the CLI would run (runs with --allow go to
// sandboxlab-harness: TestRunAllow).
func TestCLILinksNoProxy(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "sandboxlab/cmd/sandboxlab").CombinedOutput()
	assert.NilError(t, err, "%s", out)
	pkgs := strings.Fields(string(out))
	assert.Check(t, slices.Contains(pkgs, "sandboxlab/sandbox"), "go list names the CLI's packages")
	for _, pkg := range pkgs {
		for _, tree := range []string{"sandboxlab/sandbox/egress/proxy", "net/http", "crypto", "compress"} {
			if pkg == tree || strings.HasPrefix(pkg, tree+"/") {
				t.Errorf("sandboxlab links %s", pkg)
			}
		}
	}
}
