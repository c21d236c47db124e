package harness

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"sandboxlab/sandbox/reexec"
)

// The test binary doubles as the harness's worker (WorkerCommand), the
// checks' and attacks' helpers and the sandbox's init, as the sandboxlab
// binary does: the mutation tests run the real harness in this process
// and its probes in copies of this binary.
func TestMain(m *testing.M) {
	reexec.Init()
	// As sandboxlab's main does: descriptors that go test or CI left open
	// without close-on-exec are not the probes' to inherit (each would
	// take a place under a program's limit on open files).
	unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	os.Exit(m.Run())
}
