package checks

import (
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

var freshKeyring = &Check{
	ID:      "fresh_keyring",
	Suite:   verdict.Hardening,
	Promise: "the program starts with an empty session keyring: the keys of the harness's session are out of reach",
	Level:   5,
	Untimed: true,
	Body: func(t *T) {
		// Session keyrings belong to a thread's credentials, and the run
		// is forked from this one: give it a keyring of its own with a
		// canary key, and let the thread end with the check.
		runtime.LockOSThread()
		_, _, errno := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0)
		t.Assert(errno == 0, "joining a session keyring: %v", errno)
		secret := token()
		typ, _ := unix.BytePtrFromString("user")
		desc, _ := unix.BytePtrFromString("sandboxlab-canary")
		payload := []byte(secret)
		ring := int32(unix.KEY_SPEC_SESSION_KEYRING)
		key, _, errno := unix.Syscall6(unix.SYS_ADD_KEY, uintptr(unsafe.Pointer(typ)), uintptr(unsafe.Pointer(desc)),
			uintptr(unsafe.Pointer(&payload[0])), uintptr(len(payload)), uintptr(ring), 0)
		t.Assert(errno == 0, "adding the canary key: %v", errno)
		t.Cleanup(func() { unix.KeyctlInt(unix.KEYCTL_REVOKE, int(key), 0, 0, 0) })
		res := t.runPython(Preset(5, notTimed), sandbox.Command{}, `
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(4096)
n = libc.syscall(250, 11, -3, buf, 4096)  # keyctl(KEYCTL_READ, KEY_SPEC_SESSION_KEYRING)
ids = [int.from_bytes(buf.raw[i:i + 4], "little") for i in range(0, max(n, 0), 4)]
print(len(ids), "keys")
for k in ids:
    b = ctypes.create_string_buffer(4096)
    m = libc.syscall(250, 11, k, b, 4096)
    print(k, b.raw[:max(m, 0)].decode(errors="replace"))
`)
		t.Check(!strings.Contains(res.Stdout, secret), "the program read the canary key of the harness's session: %s", strings.TrimSpace(res.Stdout))
		t.Evidence("the canary key's payload never reached the program; its session keyring: %s", lastLine(res.Stdout))
	},
}
