package seccomp

import (
	"runtime/debug"

	"sandboxlab/sandbox/seccomp/internal/int80"
)

// hasCompatABI: amd64 has a second ABI, i386's, behind int $0x80.
const hasCompatABI = true

// compatProbeMain makes the 32-bit getpid (number 20), harmless whatever
// it returns. Where the kernel has no 32-bit entry the instruction faults
// (a general protection fault, SIGSEGV), which the runtime turns into a
// panic recovered here: exit status noCompatEntry.
func compatProbeMain([]string) (code int) {
	debug.SetPanicOnFault(true)
	defer func() {
		if recover() != nil {
			code = noCompatEntry
		}
	}()
	if int80.Syscall(20, 0, 0, 0) <= 0 {
		return 1
	}
	return 0
}
