package agent

import (
	"os"
	"testing"

	"sandboxlab/sandbox/reexec"
)

// The test binary doubles as the sandbox's init, as the sandboxlab
// binary does.
func TestMain(m *testing.M) {
	reexec.Init()
	os.Exit(m.Run())
}
