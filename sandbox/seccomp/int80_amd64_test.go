package seccomp

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/skip"

	"sandboxlab/sandbox/seccomp/internal/int80"
)

func init() { helpers["int80"] = int80Helper }

// int80Helper makes the 32-bit getpid (number 20) through int $0x80,
// under the filter when args[0] is "filter", and prints its result.
func int80Helper(args []string) int {
	if len(args) > 0 && args[0] == "filter" {
		if err := installFilter(); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 4
		}
	}
	fmt.Printf("getpid=%d\n", int80.Syscall(20, 0, 0, 0))
	return 0
}

// TestI386EntryIsKilled makes a 32-bit system call from the 64-bit
// helper. Bare, it works (the helper is PID 1 of its namespace); under
// the filter, the process is killed with SIGSYS before the call runs.
func TestI386EntryIsKilled(t *testing.T) {
	build(t)
	out, stderr, st := runHelper(t, "int80", "bare")
	skip.If(t, !st.Success() || !strings.Contains(out, "getpid=1\n"),
		"the kernel does not take 32-bit calls here (no IA32 emulation?): %v %s %s", st, out, stderr)

	out, stderr, st = runHelper(t, "int80", "filter")
	ws := st.Sys().(syscall.WaitStatus)
	assert.Check(t, ws.Signaled(), "helper was not killed: %v\nstdout:\n%s\nstderr:\n%s", st, out, stderr)
	assert.Check(t, is.Equal(ws.Signal(), syscall.SIGSYS))
	assert.Check(t, is.Equal(out, ""), "the 32-bit call returned")
}

// TestCompatEntryMatchesTheKernel: CompatEntry says what the bare 32-bit
// call shows, on a kernel with the entry and on one without.
func TestCompatEntryMatchesTheKernel(t *testing.T) {
	build(t)
	out, _, st := runHelper(t, "int80", "bare")
	works := st.Success() && strings.Contains(out, "getpid=1\n")
	ok, err := CompatEntry()
	assert.NilError(t, err)
	assert.Check(t, is.Equal(ok, works), "bare int $0x80: %v %q", st, out)
}
