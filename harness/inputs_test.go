package harness

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab"
	"sandboxlab/report"
)

// inputsTree is a made-up module: the machinery, a library (and a
// package it imports), checks a, b and c (b declares a helper c calls;
// the registry lists all three), attacks x and y with their programs,
// and a package the checks import.
func inputsTree() fstest.MapFS {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	return fstest.MapFS{
		"go.mod":                      file("module sandboxlab\n"),
		"sandbox/run.go":              file("package sandbox\n\nimport _ \"sandboxlab/lib2\"\n"),
		"lib2/lib2.go":                file("package lib2\n"),
		"sandbox/seccomp/x/x_amd64.s": file("TEXT ·x(SB),0,$0\n"),
		"mutants/gate.go":             file("package mutants\n"),
		"verdict/verdict.go":          file("package verdict\n"),
		"harness/worker.go":           file("package harness\n"),
		"harness/probe.go":            file("package harness\n"),
		"harness/jail.go":             file("package harness\n"),
		"report/model.go":             file("package report\n"),
		"report/mutation.go":          file("package report\n"),
		"report/templates/page.tmpl":  file("{{.}}\n"),
		"checks/check.go":             file("package checks\n\nimport _ \"sandboxlab/extra\"\n\nfunc shared() {}\n"),
		"checks/registry.go":          file("package checks\n\nvar all = []*int{a, b, c}\n"),
		"checks/a.go":                 file("package checks\n\nvar a = new(int)\n\nfunc init() { shared() }\n"),
		"checks/b.go":                 file("package checks\n\nvar b = new(int)\n\nfunc bHelper() int { return 1 }\n"),
		"checks/c.go":                 file("package checks\n\nvar c = new(int)\n\nfunc cBody() int { paths := 2; return bHelper() + paths }\n"),
		"checks/a_test.go":            file("package checks\n"),
		"checks/agent/agent.go":       file("package agent\n"),
		"extra/extra.go":              file("package extra\n"),
		"attacks/attacks.go":          file("package attacks\n\ntype attack interface{ judge() }\n"),
		"attacks/x.go":                file("package attacks\n\ntype xAttack struct{}\n\nfunc (xAttack) judge() {}\n"),
		"attacks/y.go":                file("package attacks\n\ntype yAttack struct{}\n\nfunc (yAttack) judge() {}\n"),
		"attacks/programs/x.py":       file("print('x')\n"),
		"attacks/programs/y.py":       file("print('y')\n"),
	}
}

var inputsUniverse = Universe{Checks: []string{"a", "b", "c"}, Attacks: []string{"x", "y"}}

// TestInputsDigests: each edit changes the digests of what it can
// change, and only those.
func TestInputsDigests(t *testing.T) {
	env := Fingerprint{"kernel": "6.1"}
	before, err := ComputeInputs(inputsTree(), env, inputsUniverse)
	assert.NilError(t, err)
	cases := []struct {
		file string
		want []string // the digests that change: shared groups and probes
	}{
		{"report/templates/page.tmpl", nil},
		{"checks/a_test.go", nil},
		{"checks/agent/agent.go", nil}, // a package the checks do not import
		{"checks/a.go", []string{"checks/a"}},
		{"checks/c.go", []string{"checks/c"}},
		{"checks/b.go", []string{"checks"}}, // c calls b's helper: b is shared
		{"checks/registry.go", []string{"checks"}},
		{"extra/extra.go", []string{"checks"}}, // imported by the checks
		{"attacks/x.go", []string{"attacks/x"}},
		{"attacks/programs/y.py", []string{"attacks/y"}},
		{"attacks/attacks.go", []string{"attacks"}},
		{"sandbox/run.go", []string{"library"}},
		{"sandbox/seccomp/x/x_amd64.s", []string{"library"}},
		{"lib2/lib2.go", []string{"library"}}, // imported by the library
		{"report/model.go", []string{"machinery"}},
		{"go.mod", []string{"machinery"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			tree := inputsTree()
			tree[c.file] = &fstest.MapFile{Data: append(slices.Clone(tree[c.file].Data), "\n// edited\n"...)}
			after, err := ComputeInputs(tree, env, inputsUniverse)
			assert.NilError(t, err)
			assert.Check(t, is.DeepEqual(changedDigests(before, after), c.want))
		})
	}

	// A new check, listed in the registry: it alone is new; the
	// registry's list is no input of the others.
	tree := inputsTree()
	tree["checks/registry.go"] = &fstest.MapFile{Data: []byte("package checks\n\nvar all = []*int{\n\ta, b, c,\n\t// the new one\n\td,\n}\n")}
	tree["checks/d.go"] = &fstest.MapFile{Data: []byte("package checks\n\nvar d = new(int)\n")}
	added, err := ComputeInputs(tree, env, Universe{Checks: []string{"a", "b", "c", "d"}, Attacks: inputsUniverse.Attacks})
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(changedDigests(before, added), []string(nil)))
	assert.Check(t, added.Probes["checks/d"] != "")
	// A list of anything else is an input like any code.
	tree["checks/registry.go"] = &fstest.MapFile{Data: []byte("package checks\n\nvar all = []*int{a, b, c, d}\n\nvar levels = []int{one}\n\nconst one = 1\n")}
	before2, err := ComputeInputs(tree, env, Universe{Checks: []string{"a", "b", "c", "d"}, Attacks: inputsUniverse.Attacks})
	assert.NilError(t, err)
	tree["checks/registry.go"] = &fstest.MapFile{Data: []byte("package checks\n\nvar all = []*int{a, b, c, d}\n\nvar levels = []int{two}\n\nconst two = 1\n")}
	after2, err := ComputeInputs(tree, env, Universe{Checks: []string{"a", "b", "c", "d"}, Attacks: inputsUniverse.Attacks})
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(changedDigests(before2, after2), []string{"checks"}))

	tree = inputsTree()
	delete(tree, "harness/jail.go")
	_, err = ComputeInputs(tree, env, inputsUniverse)
	assert.Check(t, is.ErrorContains(err, "the sources lack harness/jail.go"), "what is not there cannot be vouched for")
}

func changedDigests(a, b *report.Inputs) []string {
	var out []string
	for k, v := range a.Shared {
		if b.Shared[k] != v {
			out = append(out, k)
		}
	}
	for k, v := range a.Probes {
		if b.Probes[k] != v {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// TestInputsOfThisBinary: the sources built into the binary digest
// every registered check and attack, and the environment is this host's.
func TestInputsOfThisBinary(t *testing.T) {
	u := Registered()
	in, err := ComputeInputs(sandboxlab.Sources, HostFingerprint(), u)
	assert.NilError(t, err)
	assert.Check(t, is.Len(in.Probes, len(u.Checks)+len(u.Attacks)))
	for _, k := range []string{groupLibrary, groupMachinery, "checks", "attacks"} {
		assert.Check(t, strings.HasPrefix(in.Shared[k], "sha256:"), k)
	}
	for _, k := range []string{"kernel", "landlock_abi", "cgroup", "uid", "compat_entry", "python", "go", "build"} {
		assert.Check(t, in.Environment[k] != "", "the fingerprint has no %s", k)
	}
	_, unvouchedBuild := in.Environment[unvouched]
	assert.Check(t, !unvouchedBuild, in.Environment[unvouched])
}

// TestProbesUseOnlyTheModel: the checks and the attacks the mutation
// probes run use nothing of report but what model.go and mutation.go
// declare, which the machinery digests: the renderers and templates are
// no input. (attacks/sandboxes.go, the matrix of other sandboxes, is no
// mutation probe's.)
func TestProbesUseOnlyTheModel(t *testing.T) {
	root := moduleRoot(t)
	declared := map[string]bool{}
	for _, f := range []string{"report/model.go", "report/mutation.go"} {
		af, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, f), nil, parser.SkipObjectResolution)
		assert.NilError(t, err)
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						declared[ts.Name.Name] = true
					}
				}
			case *ast.FuncDecl:
				if d.Recv == nil {
					declared[d.Name.Name] = true
				}
			}
		}
	}
	for _, dir := range []string{"checks", "attacks"} {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		assert.NilError(t, err)
		for _, f := range files {
			// sandboxes.go and backend.go are the attack × sandbox
			// runner, which no probe runs.
			if strings.HasSuffix(f, "_test.go") || filepath.Base(f) == "sandboxes.go" || filepath.Base(f) == "backend.go" {
				continue
			}
			b, err := os.ReadFile(f)
			assert.NilError(t, err)
			af, err := parser.ParseFile(token.NewFileSet(), f, b, parser.SkipObjectResolution)
			assert.NilError(t, err)
			ast.Inspect(af, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "report" {
						assert.Check(t, declared[sel.Sel.Name], "%s uses report.%s, which model.go and mutation.go do not declare: add its file to machineryPaths", f, sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}
