package sandbox

import (
	"os"
	"strings"
	"sync"
)

// Identity is a host uid and gid.
type Identity struct {
	UID, GID int
}

// nobody is the unprivileged host identity the program gets when the
// harness runs as host root. With a 0→0 uid map RLIMIT_NPROC does not bite
// and "root" in the sandbox could write host files, so root is never
// passed on.
var nobody = Identity{UID: 65534, GID: 65534}

var hostRootOnce = sync.OnceValue(func() bool {
	if os.Geteuid() != 0 {
		return false
	}
	// uid 0 inside a user namespace (a container, a test helper) is not
	// host root: there, uid 0 is whatever the map says and is kept.
	b, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return true
	}
	f := strings.Fields(string(b))
	return len(f) >= 3 && f[0] == "0" && f[1] == "0"
})

// HostIdentity returns the host uid and gid the sandboxed program runs as,
// at every level: 65534/65534 when the caller is host root, otherwise the
// caller's own. From L3 up the program is root inside a user namespace
// whose root is mapped to this identity. Files the program must be able to
// use (its session directory, fixtures it is meant to reach) belong to it.
func HostIdentity() Identity {
	if hostRootOnce() {
		return nobody
	}
	return Identity{UID: os.Geteuid(), GID: os.Getegid()}
}

// HostRoot reports whether the caller is root in the initial user namespace.
func HostRoot() bool { return hostRootOnce() }
