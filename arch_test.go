package sandboxlab

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// The architecture table (docs/architecture.md) says, for every package
// of the module, what it is and what it may import. TestArchitectureTable
// holds the "may import" column to the code, both ways, as `go list` sees
// it (the non-test files, under the default build and -tags nomutants).
// How an entry is written (the page says the same under the table):
//
//   - a package of the module by its path in the module: `sandbox/procfs`;
//     the root package is `sandboxlab`; `dir/...` is dir and every
//     package below it;
//   - a module from go.mod by its short name, which stands for every
//     package of the module: `x/sys` for golang.org/x/sys, otherwise the
//     last element of its path without the major version (`yaml` for
//     gopkg.in/yaml.v3, `mpb` for github.com/vbauerster/mpb/v8); or one
//     package of it by the short name and the rest of its path:
//     `x/net/bpf`;
//   - anything outside backticks is for people: the standard library is
//     never listed and always allowed.
//
// The package column names one package per row.

const (
	archDoc     = "docs/architecture.md"
	archHeading = "## Packages"
	archHeader  = "| package | what it is | may import |"
	modulePath  = "sandboxlab"
)

// archRow is one row of the table.
type archRow struct {
	line    int // in archDoc
	pkg     string
	what    string
	entries []string
}

// listed is one package as `go list -json` gives it.
type listed struct {
	ImportPath string
	Standard   bool
	Imports    []string
	Deps       []string
	Module     *struct {
		Path string
		Main bool
	}
}

// modGraph is the module's packages and what they import, from go list.
type modGraph struct {
	own      map[string]*listed // the module's packages, by import path
	moduleOf map[string]string  // every third-party package's module
	// imports are each package's non-standard imports under every build
	// the test looks at, joined.
	imports map[string][]string
}

var (
	backticked   = regexp.MustCompile("`([^`]+)`")
	majorElement = regexp.MustCompile(`^v[0-9]+$`)  // github.com/vbauerster/mpb/v8
	majorSuffix  = regexp.MustCompile(`\.v[0-9]+$`) // gopkg.in/yaml.v3
)

// readArchTable parses the table under the Packages heading.
func readArchTable(r io.Reader) ([]archRow, error) {
	sc := bufio.NewScanner(r)
	var rows []archRow
	section, inTable := false, false
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == archHeading:
			section = true
		case section && !inTable && line == archHeader:
			inTable = true
		case inTable && strings.HasPrefix(line, "| ---"):
		case inTable && strings.HasPrefix(line, "|"):
			row, err := parseArchRow(n, line)
			if err != nil {
				return nil, err
			}
			rows = append(rows, row)
		case inTable:
			return rows, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !inTable {
		return nil, fmt.Errorf("%s has no table headed %q under %q", archDoc, archHeader, archHeading)
	}
	return rows, nil
}

func parseArchRow(n int, line string) (archRow, error) {
	cells := strings.Split(strings.Trim(line, "|"), "|")
	if len(cells) != 3 {
		return archRow{}, fmt.Errorf("%s:%d: the architecture table's row has %d cells, want 3 (package | what it is | may import)", archDoc, n, len(cells))
	}
	pkgs := backticked.FindAllStringSubmatch(cells[0], -1)
	if len(pkgs) != 1 || strings.TrimSpace(cells[0]) != "`"+pkgs[0][1]+"`" {
		return archRow{}, fmt.Errorf("%s:%d: the package column says %q; write one package per row, in backticks, by its path in the module", archDoc, n, strings.TrimSpace(cells[0]))
	}
	row := archRow{line: n, pkg: pkgs[0][1], what: strings.TrimSpace(cells[1])}
	for _, m := range backticked.FindAllStringSubmatch(cells[2], -1) {
		row.entries = append(row.entries, m[1])
	}
	return row, nil
}

// goList loads the module's packages and their imports under each build.
func goList(t *testing.T, tagSets ...string) *modGraph {
	t.Helper()
	goTool, err := exec.LookPath("go")
	assert.NilError(t, err, "go list needs the go command on PATH")
	g := &modGraph{own: map[string]*listed{}, moduleOf: map[string]string{}, imports: map[string][]string{}}
	std := map[string]bool{}
	for _, tags := range tagSets {
		cmd := exec.Command(goTool, "list", "-deps", "-tags", tags, "-json=ImportPath,Standard,Imports,Deps,Module", "./...")
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list -tags %q: %v\n%s", tags, err, ee.Stderr)
		}
		assert.NilError(t, err, "go list -tags %q", tags)
		dec := json.NewDecoder(bytes.NewReader(out))
		for dec.More() {
			p := &listed{}
			assert.NilError(t, dec.Decode(p), "decoding go list's output")
			switch {
			case p.Standard:
				std[p.ImportPath] = true
			case p.Module == nil:
			case p.Module.Main:
				if _, seen := g.own[p.ImportPath]; !seen {
					g.own[p.ImportPath] = p
				}
				for _, imp := range p.Imports {
					if !slices.Contains(g.imports[p.ImportPath], imp) {
						g.imports[p.ImportPath] = append(g.imports[p.ImportPath], imp)
					}
				}
			default:
				g.moduleOf[p.ImportPath] = p.Module.Path
			}
		}
	}
	for path, imps := range g.imports {
		g.imports[path] = slices.DeleteFunc(imps, func(imp string) bool { return std[imp] })
	}
	return g
}

// name is how the table names an import: a package of the module by its
// path in the module, a third-party package by its module's short name
// and the rest of its path.
func (g *modGraph) name(path string) string {
	if _, own := g.own[path]; own {
		if path == modulePath {
			return modulePath
		}
		return strings.TrimPrefix(path, modulePath+"/")
	}
	if mod, ok := g.moduleOf[path]; ok {
		return shortModule(mod) + strings.TrimPrefix(path, mod)
	}
	return path
}

// shortModule is a module's short name: x/sys for golang.org/x/sys, else
// the last element of its path without the major version.
func shortModule(mod string) string {
	if rest, ok := strings.CutPrefix(mod, "golang.org/x/"); ok {
		return "x/" + rest
	}
	if i := strings.LastIndex(mod, "/"); i >= 0 && majorElement.MatchString(mod[i+1:]) {
		mod = mod[:i]
	}
	mod = mod[strings.LastIndex(mod, "/")+1:]
	return majorSuffix.ReplaceAllString(mod, "")
}

// matches reports whether a table entry admits an import the table
// names as name, of module mod ("" for the module's own packages).
func matches(entry, name, mod string) bool {
	if entry == name {
		return true
	}
	if dir, ok := strings.CutSuffix(entry, "/..."); ok && (name == dir || strings.HasPrefix(name, dir+"/")) {
		return true
	}
	return mod != "" && entry == shortModule(mod)
}

// admitting returns the entries of a row that admit import path imp.
func (g *modGraph) admitting(entries []string, imp string) []string {
	var out []string
	for _, e := range entries {
		if matches(e, g.name(imp), g.moduleOf[imp]) {
			out = append(out, e)
		}
	}
	return out
}

// entryFor is the entry to add for an import: its package's path in the
// module, or its module's short name.
func (g *modGraph) entryFor(imp string) string {
	if mod := g.moduleOf[imp]; mod != "" {
		return shortModule(mod)
	}
	return g.name(imp)
}

// rowProblems says what is wrong with one row: the imports it does not
// admit, the entries its package does not import, and the entries that
// name nothing.
func (g *modGraph) rowProblems(row archRow, path string) []string {
	var probs []string
	used := map[string]bool{}
	for _, imp := range g.imports[path] {
		es := g.admitting(row.entries, imp)
		for _, e := range es {
			used[e] = true
		}
		if len(es) == 0 {
			probs = append(probs, fmt.Sprintf("it imports %s, which the row does not name: add `%s` if the import is meant, or remove the import", imp, g.entryFor(imp)))
		}
	}
	for _, e := range row.entries {
		switch {
		case used[e]:
		case !g.namesSomething(e):
			probs = append(probs, fmt.Sprintf("`%s` is neither a package of the module nor a module of go.mod that anything links: fix its spelling (see the notes under the table) or remove it", e))
		default:
			probs = append(probs, fmt.Sprintf("it does not import `%s`: remove it from the row", e))
		}
	}
	return probs
}

// namesSomething reports whether an entry admits any package go list
// knows of, the module's or a third party's.
func (g *modGraph) namesSomething(entry string) bool {
	for p := range g.own {
		if matches(entry, g.name(p), "") {
			return true
		}
	}
	for p, mod := range g.moduleOf {
		if matches(entry, g.name(p), mod) {
			return true
		}
	}
	return false
}

// column is the "may import" cell that matches the code: the row's own
// entries where they admit an import, else the entry for it; the
// module's packages first.
func (g *modGraph) column(entries []string, path string) string {
	var own, third []string
	for _, imp := range g.imports[path] {
		e := g.entryFor(imp)
		if es := g.admitting(entries, imp); len(es) > 0 {
			e = es[0]
		}
		e = "`" + e + "`"
		switch {
		case slices.Contains(own, e) || slices.Contains(third, e):
		case g.moduleOf[imp] != "":
			third = append(third, e)
		default:
			own = append(own, e)
		}
	}
	slices.Sort(own)
	slices.Sort(third)
	if all := append(own, third...); len(all) > 0 {
		return strings.Join(all, ", ")
	}
	return "the standard library"
}

// TestArchitectureTable: the table of packages in docs/architecture.md
// has one row for every package of the module and none for a package
// that is not, and each row's "may import" column names exactly what
// the package's non-test files import, the standard library aside.
func TestArchitectureTable(t *testing.T) {
	f, err := os.Open(archDoc)
	assert.NilError(t, err)
	defer f.Close()
	rows, err := readArchTable(f)
	assert.NilError(t, err)
	g := goList(t, "", "nomutants")
	seen := map[string]bool{}
	for _, row := range rows {
		path := modulePath
		if row.pkg != modulePath {
			path += "/" + row.pkg
		}
		where := fmt.Sprintf("%s:%d, the architecture table's row `%s`", archDoc, row.line, row.pkg)
		switch {
		case seen[path]:
			t.Errorf("%s: a second row for the package; merge the two", where)
			continue
		case g.own[path] == nil:
			t.Errorf("%s: go list finds no package %s; remove the row, or fix the path (the package's path in the module)", where, path)
			continue
		case row.what == "":
			t.Errorf("%s: say in \"what it is\" what the package is", where)
		}
		seen[path] = true
		if probs := g.rowProblems(row, path); len(probs) > 0 {
			t.Errorf("%s:\n- %s\nThe column that matches the code: %s", where, strings.Join(probs, "\n- "), g.column(row.entries, path))
		}
	}
	var missing []string
	for path := range g.own {
		if !seen[path] {
			missing = append(missing, path)
		}
	}
	slices.Sort(missing)
	for _, path := range missing {
		t.Errorf("%s: the architecture table has no row for %s; add one:\n| `%s` | <what it is> | %s |",
			archDoc, path, g.name(path), g.column(nil, path))
	}
}

// isTestHelper reports whether a package is a test helper: named after
// the package above it with "test", as net/http/httptest and
// report/reporttest are.
func isTestHelper(path string) bool {
	elems := strings.Split(path, "/")
	n := len(elems)
	return n >= 2 && elems[n-1] == elems[n-2]+"test"
}

// testModules are the modules made for tests. The product links none of
// them: their initialisers would run in every process of sandboxlab, the
// sandbox's init included (go-cmp's alone took about 1 ms a start).
var testModules = []string{"gotest.tools/v3", "github.com/google/go-cmp", "github.com/santhosh-tekuri/jsonschema/v6"}

// TestTestHelpersOnlyInTests: a test helper (report/reporttest) and a
// test library (gotest.tools, go-cmp, the JSON Schema validator) are for
// tests: no program or library of the module links one.
func TestTestHelpersOnlyInTests(t *testing.T) {
	g := goList(t, "")
	var helpers []string
	for path := range g.own {
		if isTestHelper(path) {
			helpers = append(helpers, path)
		}
	}
	assert.Assert(t, len(helpers) > 0, "no test helper package found: is report/reporttest gone?")
	for path, p := range g.own {
		for _, h := range helpers {
			if path != h && slices.Contains(p.Deps, h) {
				t.Errorf("%s links %s, a package for tests only: import it from _test.go files alone", path, h)
			}
		}
		if isTestHelper(path) {
			continue
		}
		for _, d := range p.Deps {
			if mod := g.moduleOf[d]; slices.Contains(testModules, mod) {
				t.Errorf("%s links %s, of %s, a library for tests: import it from _test.go files alone", path, d, mod)
				break
			}
		}
	}
}

// TestArchitectureEntries pins how a table entry is read.
func TestArchitectureEntries(t *testing.T) {
	for _, tc := range []struct {
		entry, name, mod string
		want             bool
	}{
		{"sandbox", "sandbox", "", true},
		{"sandbox", "sandbox/procfs", "", false},
		{"sandbox/...", "sandbox", "", true},
		{"sandbox/...", "sandbox/seccomp/internal/int80", "", true},
		{"sandbox/...", "sandboxes", "", false},
		{"x/sys", "x/sys/unix", "golang.org/x/sys", true},
		{"x/net/bpf", "x/net/bpf", "golang.org/x/net", true},
		{"x/net/bpf", "x/net/http2", "golang.org/x/net", false},
		{"yaml", "yaml", "gopkg.in/yaml.v3", true},
		{"gotest.tools", "gotest.tools/assert/cmp", "gotest.tools/v3", true},
		{"mpb", "mpb/decor", "github.com/vbauerster/mpb/v8", true},
		{"tablewriter", "tablewriter/renderer", "github.com/olekukonko/tablewriter", true},
	} {
		assert.Check(t, is.Equal(matches(tc.entry, tc.name, tc.mod), tc.want), "%q admits %q (%s)", tc.entry, tc.name, tc.mod)
	}
	rows, err := readArchTable(strings.NewReader(archHeading + "\n\n" + archHeader + "\n| --- | --- | --- |\n" +
		"| `harness` | the runner | `mutants`, `report`, yaml (and the standard library) |\n\nAfter.\n"))
	assert.NilError(t, err)
	assert.Assert(t, is.Len(rows, 1))
	assert.Check(t, is.Equal(fmt.Sprintf("%+v", rows[0]), fmt.Sprintf("%+v", archRow{line: 5, pkg: "harness", what: "the runner", entries: []string{"mutants", "report"}})))
	_, err = readArchTable(strings.NewReader(archHeading + "\n" + archHeader + "\n| `a`, `b` | two | |\n"))
	assert.Check(t, is.ErrorContains(err, "one package per row"))
}

// leanPrograms are the binaries every run starts: the CLI users call and
// the sandbox's init. heavyPackages are what they must not link: each
// package linked runs its initialisers in every process, and these are
// the renderers, schemas, templates, SDKs and the harness, which no run
// of a program needs (the start-up issue measured 23 ms of them).
var (
	leanPrograms  = []string{"sandboxlab/cmd/sandboxlab", "sandboxlab/cmd/sandboxlab-init"}
	heavyPackages = []string{
		"sandboxlab/harness", "sandboxlab/report", "sandboxlab/mcpserver", "sandboxlab/checks", "sandboxlab/attacks",
		"sandboxlab/cmd/internal/harnesscmd", "text/template", "html/template", "encoding/gob", "encoding/xml",
		"go/types", "go/parser", "regexp",
	}
	heavyModules = []string{"github.com/modelcontextprotocol/go-sdk", "github.com/olekukonko/tablewriter",
		"gopkg.in/yaml.v3", "github.com/vbauerster/mpb/v8"}
)

// TestLeanPrograms: the CLI and the init link the sandbox library and
// what it needs, and none of the harness, its renderers or its libraries.
func TestLeanPrograms(t *testing.T) {
	g := goList(t, "")
	for _, prog := range leanPrograms {
		p := g.own[prog]
		assert.Assert(t, p != nil, "no package %s", prog)
		for _, d := range p.Deps {
			if slices.Contains(heavyPackages, d) || slices.Contains(heavyModules, g.moduleOf[d]) || slices.Contains(testModules, g.moduleOf[d]) {
				t.Errorf("%s links %s: every run would pay for its initialisers", prog, d)
			}
		}
	}
}

// TestOneSourceParser: one package of the module parses Go source, so
// the Stryker report, the CI annotations and --since find a planted site
// the same way, and the renderers read only the model.
func TestOneSourceParser(t *testing.T) {
	g := goList(t, "", "nomutants")
	var parsers []string
	for path, p := range g.own {
		if slices.Contains(p.Imports, "go/parser") {
			parsers = append(parsers, path)
		}
	}
	assert.Check(t, is.DeepEqual(parsers, []string{modulePath + "/harness/gosource"}))
}
