// Package sandboxtest is for tests only: what the tests of several
// packages need to run a program as an ordinary user when they run as
// root. It imports nothing of the module, so that the sandbox's own
// tests can use it.
package sandboxtest

import (
	"cmp"
	"os"
	"os/user"
	"strconv"
	"syscall"
	"testing"
)

// UserEnv names the ordinary user the tests switch to when they run as
// root (default sbxuser). CI makes a throw-away one:
//
//	useradd --system --user-group --no-create-home --shell /usr/sbin/nologin sbxuser
const UserEnv = "SANDBOXLAB_TEST_USER"

// OrdinaryUser returns the credential of the user UserEnv names, with no
// supplementary groups, and the user's name. It skips t, saying how to
// make one, when there is no such user, and fails it when that user is
// root. The caller checks that it runs as root: only root may switch.
func OrdinaryUser(t testing.TB) (*syscall.Credential, string) {
	t.Helper()
	name := cmp.Or(os.Getenv(UserEnv), "sbxuser")
	u, err := user.Lookup(name)
	if err != nil {
		t.Skipf("no ordinary user to switch to (%v): set %s to a throw-away user, or make one: "+
			"useradd --system --user-group --no-create-home --shell /usr/sbin/nologin sbxuser", err, UserEnv)
	}
	uid, uerr := strconv.ParseUint(u.Uid, 10, 32)
	gid, gerr := strconv.ParseUint(u.Gid, 10, 32)
	if uerr != nil || gerr != nil || uid == 0 {
		t.Fatalf("%s (uid %s, gid %s) is no ordinary user to switch to", name, u.Uid, u.Gid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, name
}
