package attacks

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

var stealKeyringSpec = &spec{
	id:        "steal_keyring",
	escapes:   "reads the payload of a key in the session keyring the harness holds",
	firstStop: 5,
	new:       func() attack { return &stealKeyring{} },
	elsewhere: elsewhere{harmlessAsRoot: true}, // the keyring it reads is the cell's own
}

// stealKeyring's canary is a key in the harness's session keyring, as a
// user's login session holds credentials (a Kerberos ticket, an SSH agent
// key). The cell's thread gets a session keyring of its own for it, so
// that no real session of the host is touched; the program is forked from
// that thread (Run keeps each cell on an OS thread of its own).
type stealKeyring struct {
	secret string
	key    int
}

func (s *stealKeyring) setup(e *env) error {
	runtime.LockOSThread() // undone when the cell's goroutine ends: its thread is discarded
	if _, _, errno := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); errno != 0 {
		return fmt.Errorf("joining a session keyring for the canary: %w", errno)
	}
	s.secret = "keyring canary " + randomHex(16)
	typ, _ := unix.BytePtrFromString("user")
	desc, _ := unix.BytePtrFromString("sandboxlab-canary-" + e.token)
	payload := []byte(s.secret)
	ring := int32(unix.KEY_SPEC_SESSION_KEYRING)
	id, _, errno := unix.Syscall6(unix.SYS_ADD_KEY, uintptr(unsafe.Pointer(typ)), uintptr(unsafe.Pointer(desc)),
		uintptr(unsafe.Pointer(&payload[0])), uintptr(len(payload)), uintptr(ring), 0)
	if errno != 0 {
		return fmt.Errorf("adding the canary key: %w", errno)
	}
	s.key = int(id)
	e.onCleanup(func() { unix.KeyctlInt(unix.KEYCTL_REVOKE, s.key, 0, 0, 0) })
	return nil
}

func (s *stealKeyring) judge(e *env) verdict {
	if strings.Contains(e.output(), s.secret) {
		return escaped("the output holds the canary key's payload (key %d)", s.key)
	}
	// The host cannot look into another process's keyrings: the layer is
	// the policy's.
	return e.layer(e.policy.Filesystem.FreshKeyring, "fresh session keyring", "the canary key's payload is not in the output; %s", lastLine(e.res.Stdout))
}
