package gosource

import (
	"testing"
	"testing/fstest"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// siteSrc plants two defects on one line of f, one of them twice, and a
// third in g, after a line with a non-ASCII rune: its UTF-16 column is
// not its byte column.
const siteSrc = `package sandbox

func f() {
	if mutants.On(mutants.AbsPathOK) && !mutants.On(mutants.PathGuardsOff) {
	}
	_ = mutants.On(mutants.PathGuardsOff) // mutants.On(mutants.NoNetNS) in a comment is no site
}

func g() {
	s := "é"; _ = mutants.On(mutants.NoPIDNS)
}
`

func TestSites(t *testing.T) {
	fsys := fstest.MapFS{"sandbox/files.go": {Data: []byte(siteSrc)}}
	sites, err := Locate(fsys, "sandbox/files.go", "path_guards_off")
	assert.NilError(t, err)
	assert.Check(t, is.Len(sites, 2))
	assert.Check(t, is.DeepEqual(sites[0], Site{Start: Pos{4, 39, 39}, End: Pos{4, 72, 72}, Decl: Lines{3, 7}}))
	assert.Check(t, is.Equal(sites[1].Start.Line, 6))

	sites, err = Locate(fsys, "sandbox/files.go", "NoPIDNS")
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(sites, []Site{{Start: Pos{10, 17, 16}, End: Pos{10, 44, 43}, Decl: Lines{9, 11}}}), "byte and UTF-16 columns")

	_, err = Locate(fsys, "sandbox/files.go", "no_net_ns")
	assert.Check(t, is.ErrorContains(err, "no mutants.On call for no_net_ns in sandbox/files.go"), "a comment is no site")
	_, err = Locate(fsys, "sandbox/gone.go", "no_net_ns")
	assert.Check(t, is.ErrorContains(err, "reading the site of no_net_ns"))
	_, err = ParseSites("bad.go", []byte("package x\nfunc {"))
	assert.Check(t, is.ErrorContains(err, "parsing bad.go"))

	line := LineFunc(fstest.MapFS{}, fsys)
	assert.Check(t, is.Equal(line("sandbox/files.go", "abs_path_ok"), 4), "the second root has it")
	assert.Check(t, is.Equal(line("sandbox/files.go", "no_net_ns"), 1), "fallback")
}

func TestImports(t *testing.T) {
	got, err := Imports("a.go", []byte("package a\n\nimport (\n\t\"fmt\"\n\tx \"sandboxlab/sandbox\"\n)\n"))
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(got, []string{"fmt", "sandboxlab/sandbox"}))
}
