package mcpserver_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/sandbox/cgroup"
	"sandboxlab/sandbox/reexec"
)

// The test binary doubles as the sandbox's init, as the sandboxlab
// binary does. The tests over stdio run the real CLI, built once.
func TestMain(m *testing.M) {
	reexec.Init()
	if os.Getenv(bareServerEnv) != "" {
		os.Exit(serveBare())
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	binErr    error
)

// binary returns the sandboxlab CLI, built from this module once per test
// run (static, as make build makes it), in a directory every identity can
// reach; or the one $SANDBOXLAB_TEST_BIN names, for a test binary run as
// a user who cannot build (the module cache is root's).
func binary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("SANDBOXLAB_TEST_BIN"); bin != "" {
		return bin
	}
	buildOnce.Do(func() {
		if _, err := exec.LookPath("go"); err != nil {
			binErr = fmt.Errorf("no go command to build the CLI: %w", err)
			return
		}
		if binDir, binErr = os.MkdirTemp("", "sandboxlab-mcp-bin-"); binErr != nil {
			return
		}
		os.Chmod(binDir, 0o755)
		binPath = filepath.Join(binDir, "sandboxlab")
		// sandboxlab execs sandboxlab-harness beside it for mcp.
		cmd := exec.Command("go", "build", "-o", binDir+"/", "sandboxlab/cmd/sandboxlab", "sandboxlab/cmd/sandboxlab-harness", "sandboxlab/cmd/sandboxlab-init")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("building the CLI: %v\n%s", err, out)
		}
	})
	assert.NilError(t, binErr)
	return binPath
}

// testLevel is the level the tests serve: the default, L6, where it can
// be had (as root here: cgroup v1), else L5, as an ordinary user must.
func testLevel() int {
	if os.Geteuid() == 0 {
		return 6
	}
	return 5
}

// newRoot makes a directory for sessions that the program's identity can
// pass through, and checks at the end that no session is left in it.
func newRoot(t *testing.T) string {
	t.Helper()
	root, err := os.MkdirTemp("", "sandboxlab-mcp-test-")
	assert.NilError(t, err)
	assert.NilError(t, os.Chmod(root, 0o711))
	t.Cleanup(func() {
		left, _ := filepath.Glob(filepath.Join(root, "*"))
		assert.Check(t, is.Len(left, 0), "left behind in %s: %v", root, left)
		os.RemoveAll(root)
	})
	return root
}

// groupsOf returns the control groups of runs that process pid made and
// that are still there.
func groupsOf(pid int) []string {
	m, err := cgroup.Detect()
	if err != nil {
		return nil
	}
	var dirs []string
	for _, d := range m.V1 {
		dirs = append(dirs, d)
	}
	if m.V2 != "" {
		dirs = append(dirs, m.V2)
	}
	var left []string
	for _, d := range dirs {
		found, _ := filepath.Glob(filepath.Join(d, fmt.Sprintf("sandboxlab-run-%d-*", pid)))
		left = append(left, found...)
	}
	return left
}

// lines is text's lines, for messages.
func lines(text string, n int) string {
	l := strings.Split(text, "\n")
	return strings.Join(l[:min(n, len(l))], "\n")
}
