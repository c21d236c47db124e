package sandbox

import (
	"os/exec"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// libraryMayImport lists what the library (sandbox and every package
// below it) may link besides the standard library: whoever embeds the
// sandbox in an agent server gets the sandbox, its planted-defect switch,
// and x/sys; never a renderer, a decoder or a test library. An entry
// ending in '/' admits the packages below it.
var libraryMayImport = []string{
	"sandboxlab/sandbox",
	"sandboxlab/sandbox/",
	"sandboxlab/mutants", // the switch alone; its runner is the top-level harness
	// The vocabulary's words (a defect's suite): standard library only,
	// which TestVocabularyIsStandardLibraryOnly in its package holds it to.
	"sandboxlab/verdict",
	"golang.org/x/sys/",
	"golang.org/x/net/bpf", // the seccomp filter's assembler (pure Go)
}

func TestLibraryDeps(t *testing.T) {
	goTool, err := exec.LookPath("go")
	assert.NilError(t, err, "go list needs the go command on PATH")
	for _, tags := range []string{"", "nomutants"} {
		t.Run("tags="+tags, func(t *testing.T) {
			cmd := exec.Command(goTool, "list", "-deps", "-tags", tags,
				"-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./sandbox", "./sandbox/...")
			cmd.Dir = ".."
			out, err := cmd.Output()
			assert.NilError(t, err, "go list: %s", exitText(err))
			for _, pkg := range strings.Fields(string(out)) {
				if !allowed(pkg) {
					t.Errorf("the library links %s", pkg)
				}
			}
		})
	}
}

func allowed(pkg string) bool {
	for _, p := range libraryMayImport {
		if pkg == p || strings.HasSuffix(p, "/") && strings.HasPrefix(pkg, p) {
			return true
		}
	}
	return false
}

func exitText(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
