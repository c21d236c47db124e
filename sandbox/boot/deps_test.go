package boot

import (
	"os/exec"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// initMayImport lists what the init's binary (cmd/sandboxlab-init) may
// link besides the standard library: the init's body, the layers it
// sets, the defect switch, x/sys. Every package linked runs its
// initialisers and faults its pages in on every run, before the
// program's exec.
var initMayImport = map[string]bool{
	"sandboxlab/cmd/sandboxlab-init":            true,
	"sandboxlab/sandbox/boot":                   true,
	"sandboxlab/sandbox/landlock":               true,
	"sandboxlab/sandbox/seccomp":                true,
	"sandboxlab/sandbox/seccomp/internal/int80": true,
	"sandboxlab/sandbox/reexec":                 true,
	"sandboxlab/mutants":                        true,
	"sandboxlab/verdict":                        true,
	"golang.org/x/sys/unix":                     true,
	"golang.org/x/net/bpf":                      true,
}

// initMayNotLinkStd are the standard library's costly trees, none of
// which the init runs: the supervisor's network, the egress proxy's
// HTTP and TLS, the reports' decoders and templates.
var initMayNotLinkStd = []string{"net", "crypto", "encoding/json", "compress", "text/template", "html/template", "go", "database", "image"}

func TestInitBinaryDeps(t *testing.T) {
	goTool, err := exec.LookPath("go")
	assert.NilError(t, err, "go list needs the go command on PATH")
	for _, tags := range []string{"", "nomutants"} {
		t.Run("tags="+tags, func(t *testing.T) {
			cmd := exec.Command(goTool, "list", "-deps", "-tags", tags,
				"-f", "{{.Standard}} {{.ImportPath}}", "./cmd/sandboxlab-init")
			cmd.Dir = "../.."
			out, err := cmd.Output()
			if ee, ok := err.(*exec.ExitError); ok {
				t.Fatalf("go list: %v: %s", err, ee.Stderr)
			}
			assert.NilError(t, err)
			n := 0
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				std, pkg, _ := strings.Cut(line, " ")
				n++
				if std == "false" {
					if !initMayImport[pkg] {
						t.Errorf("the init links %s", pkg)
					}
					continue
				}
				for _, tree := range initMayNotLinkStd {
					if pkg == tree || strings.HasPrefix(pkg, tree+"/") {
						t.Errorf("the init links %s", pkg)
					}
				}
			}
			assert.Assert(t, n > 10, "go list named %d packages: not the init's", n)
		})
	}
}
