package seccomp

import (
	"errors"
	"fmt"
	"os/exec"
	"sync"

	"sandboxlab/sandbox/reexec"
)

// The filter's first rule kills a call from another ABI than the native
// one: on amd64, the 32-bit entry (int $0x80). Some kernels have no such
// entry for a 64-bit process (built without IA32 emulation, booted with
// ia32_emulation=off, or a guest whose hypervisor does not pass it on, as
// on the PVM machines this project is tested on): there int $0x80 faults
// (SIGSEGV) before any filter sees it, the rule guards nothing, and
// neither a check nor an attack can tell it is there. Whoever tests it
// asks CompatEntry first and says "not applicable here" when it is false,
// rather than credit the filter with the kernel's refusal.

// compatProbe is the helper that makes one harmless 32-bit call; it exits
// with noCompatEntry where the call faults.
const (
	compatProbe   = "sandboxlab-compat-probe"
	noCompatEntry = 3
)

// Early, from this package's initialiser: the probe must answer whatever
// binary imports the package, also one (a test binary, say) whose main
// never calls reexec.Init, which would otherwise start itself again and
// again.
func init() { reexec.RegisterEarly(compatProbe, compatProbeMain) }

var compat struct {
	once sync.Once
	ok   bool
	err  error
}

// CompatEntry reports whether this kernel takes system calls through the
// 32-bit entry from a 64-bit process, as measured once per process by a
// helper that makes the 32-bit getpid: it exits 0 where the entry exists,
// and where it does not the call faults (SIGSEGV), which the helper
// recovers from and reports. It is false on architectures
// without a second ABI. Any binary that imports this package answers the
// probe (it takes over from the package's initialiser).
func CompatEntry() (bool, error) {
	compat.once.Do(func() { compat.ok, compat.err = probeCompatEntry() })
	return compat.ok, compat.err
}

func probeCompatEntry() (bool, error) {
	if !hasCompatABI {
		return false, nil
	}
	err := reexec.Command(compatProbe).Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ee) && ee.ExitCode() == noCompatEntry:
		return false, nil
	}
	return false, fmt.Errorf("probing the kernel's 32-bit system-call entry: %w", err)
}
