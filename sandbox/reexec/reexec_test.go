package reexec

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func init() {
	Register("reexec-test-echo", func(args []string) int {
		os.Stdout.WriteString(strings.Join(args, " "))
		return 7
	})
	RegisterEarly("reexec-test-early", func(args []string) int {
		os.Stdout.WriteString("early " + strings.Join(args, " "))
		return 8
	})
}

func TestMain(m *testing.M) {
	if _, helper := registry[os.Args[0]]; helper {
		os.Stderr.WriteString("main\n") // an early helper never gets here
	}
	Init()
	os.Exit(m.Run())
}

// TestHelperRuns starts the test binary as a registered helper: it runs
// the helper's body with the arguments and exits with its status, never
// reaching the tests.
func TestHelperRuns(t *testing.T) {
	out, err := Command("reexec-test-echo", "a", "b").Output()
	assert.Check(t, is.Equal(string(out), "a b"))
	var exit *exec.ExitError
	assert.Assert(t, errors.As(err, &exit), "%v", err)
	assert.Check(t, is.Equal(exit.ExitCode(), 7))
}

// TestEarlyHelperRunsBeforeMain: a helper registered with RegisterEarly
// runs from the package initialiser, before main (here TestMain) starts.
func TestEarlyHelperRunsBeforeMain(t *testing.T) {
	cmd := Command("reexec-test-early", "a")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	assert.Check(t, is.Equal(string(out), "early a"))
	assert.Check(t, is.Equal(stderr.String(), ""), "main ran")
	var exit *exec.ExitError
	assert.Assert(t, errors.As(err, &exit), "%v", err)
	assert.Check(t, is.Equal(exit.ExitCode(), 8))
}

func TestUnknownHelperPanics(t *testing.T) {
	assert.Check(t, is.Contains(Names(), "reexec-test-echo"))
	defer func() { assert.Check(t, recover() != nil) }()
	Command("no-such-helper")
}

// TestSiblingServesItsHelper: a binary of the helper's name beside this
// one is the helper's executable, held low in the descriptor table (no
// table growth, which waits for an RCU grace period in a threaded
// process), and is not used when the child's files could cover it.
func TestSiblingServesItsHelper(t *testing.T) {
	self, err := os.Executable()
	assert.NilError(t, err)
	name := "reexec-test-sibling"
	sib := filepath.Join(filepath.Dir(self), name)
	assert.NilError(t, os.Symlink(self, sib))
	defer os.Remove(sib)
	p := Path(name, 3)
	assert.Assert(t, strings.HasPrefix(p, "/proc/self/fd/"), p)
	fd, err := strconv.Atoi(strings.TrimPrefix(p, "/proc/self/fd/"))
	assert.NilError(t, err)
	assert.Check(t, fd >= siblingMinFD && fd < 64, "held at %d", fd)
	target, err := os.Readlink(p)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(target, self), "the descriptor names the sibling's file")
	assert.Check(t, is.Equal(Path(name, siblingMinFD/2), "/proc/self/exe"), "the child's files would cover it")
	assert.Check(t, is.Equal(Path("reexec-test-none", 3), "/proc/self/exe"), "no sibling: this binary")
}
