package evidence

import (
	"fmt"

	"sandboxlab/sandbox/seccomp"
	"sandboxlab/verdict"
)

// Lacks returns why the host lacks feature f, measured here, or "" when it
// has it (or f is ""). A probe that needs f is then not applicable on this
// host, never passed or failed: the host, not the sandbox, decided it.
func Lacks(f verdict.Feature) string {
	switch f {
	case "":
		return ""
	case verdict.CompatEntry:
		ok, err := seccomp.CompatEntry()
		switch {
		case err != nil:
			return err.Error()
		case !ok:
			return "this kernel takes no 32-bit system calls from a 64-bit process (int $0x80 faults before any filter sees it)"
		}
		return ""
	}
	return fmt.Sprintf("unknown host feature %q", f)
}
