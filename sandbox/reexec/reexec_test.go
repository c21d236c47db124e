package reexec

import (
	"errors"
	"os"
	"os/exec"
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
}

func TestMain(m *testing.M) {
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

func TestUnknownHelperPanics(t *testing.T) {
	assert.Check(t, is.Contains(Names(), "reexec-test-echo"))
	defer func() { assert.Check(t, recover() != nil) }()
	Command("no-such-helper")
}
