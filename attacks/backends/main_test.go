package backends

import (
	"os"
	"testing"

	"sandboxlab/sandbox/reexec"
)

// The test binary doubles as the gate helper, as the sandboxlab binary
// does.
func TestMain(m *testing.M) {
	reexec.Init()
	os.Exit(m.Run())
}
