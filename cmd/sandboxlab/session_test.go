package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/procfs"
	"sandboxlab/sandbox/sandboxtest"
)

// sessionHostile leaves a tree its host must still be able to remove: a
// chain deeper than the open files 'session rm' gets below, names past
// PATH_MAX, directories with mode 000 inside one another, sticky and
// read-only ones, a FIFO, a socket, a name that is not UTF-8, a hard
// link, links to a host file and directory, and last its own
// directory's mode. argv: the host canary file and directory.
const sessionHostile = `
import os, socket, sys
def chain(top, depth, name):
    here = os.open(".", os.O_RDONLY)
    os.mkdir(top)
    os.chdir(top)
    for _ in range(depth):
        os.mkdir(name)
        os.chdir(name)
    os.fchdir(here)
    os.close(here)
chain("deep", 300, "d")
chain("long", 20, "L" * 250)
os.makedirs("locked/a/b")
for d, mode in (("locked/a/b", 0), ("locked/a", 0), ("locked", 0)):
    os.chmod(d, mode)
os.mkdir("sticky", 0o1777)
os.chmod("sticky", 0o1777)
os.mkdir("readonly")
open("readonly/f", "w").write("x")
os.chmod("readonly", 0o500)
os.mkfifo("fifo")
socket.socket(socket.AF_UNIX).bind("sock")
open(b"caf\xe9", "w").write("x")
os.link(b"caf\xe9", "hardlink")
os.symlink(sys.argv[1], "to-host-file")
os.symlink(sys.argv[2], "to-host-dir")
os.chmod(".", 0)
`

// asUser runs the binary with env, as cred's user when cred is set, and
// with at most nofile open files when nofile > 0.
func asUser(t *testing.T, cred *syscall.Credential, env []string, nofile int, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	if nofile > 0 { // sh's ulimit sets both limits: Go cannot raise the soft one again
		cmd = exec.Command("/bin/sh", append([]string{"-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, nofile), bin}, args...)...)
	}
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "LANG=C.UTF-8"}, env...)
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		err = fmt.Errorf("%w: %s", err, ee.Stderr)
	}
	return string(out), err
}

// TestSessionRmWhateverTheProgramDid: after a program did its worst to
// its session's tree, the session still runs, and 'session rm' and
// 'session gc' (its owner dead) remove it without a trace, with fewer
// open files than the tree is deep. As root, and as an ordinary user:
// the one SANDBOXLAB_TEST_USER names (default sbxuser) when the tests run
// as root.
func TestSessionRmWhateverTheProgramDid(t *testing.T) {
	t.Run("as this user", func(t *testing.T) { sessionRmCase(t, nil) })
	t.Run("as an ordinary user", func(t *testing.T) {
		if !sandbox.HostRoot() {
			t.Skipf("this user (uid %d) is an ordinary one", os.Geteuid())
		}
		cred, name := sandboxtest.OrdinaryUser(t)
		t.Logf("as %s (uid %d)", name, cred.Uid)
		sessionRmCase(t, cred)
	})
}

func sessionRmCase(t *testing.T, cred *syscall.Credential) {
	root, err := os.MkdirTemp("", "sandboxlab-session-test-")
	assert.NilError(t, err)
	defer os.RemoveAll(root)
	assert.NilError(t, os.Chmod(root, 0o711))
	outside := filepath.Join(root, "outside")
	assert.NilError(t, os.Mkdir(outside, 0o755))
	canary := filepath.Join(outside, "canary.txt")
	assert.NilError(t, os.WriteFile(canary, []byte("host canary"), 0o644))
	if cred != nil {
		assert.NilError(t, os.Chown(root, int(cred.Uid), int(cred.Gid)))
	}
	env := []string{"TMPDIR=" + root}
	hostile := func() string {
		out, err := asUser(t, cred, env, 0, "session", "new")
		assert.NilError(t, err)
		dir := strings.TrimSpace(out)
		_, err = asUser(t, cred, env, 0, "run", "--level", "2", "--session", dir, "--", "/usr/bin/python3", "-c", sessionHostile, canary, outside)
		assert.NilError(t, err, "building the tree")
		out, err = asUser(t, cred, env, 0, "run", "--level", "5", "--session", dir, "--", "/usr/bin/python3", "-c", "import os\nprint(sorted(os.listdir('.'))[-3:])")
		assert.NilError(t, err, "the session is refused after what its program did")
		assert.Check(t, is.Equal(out, "['sticky', 'to-host-dir', 'to-host-file']\n"))
		return dir
	}

	dir := hostile()
	_, err = asUser(t, cred, env, 64, "session", "rm", dir)
	assert.NilError(t, err, "session rm")
	assertNothingLeft(t, root, canary)

	dir = hostile()
	dead := exec.Command("/bin/true")
	assert.NilError(t, dead.Start())
	p, err := procfs.Stat(dead.Process.Pid)
	assert.NilError(t, err)
	assert.NilError(t, dead.Wait())
	assert.NilError(t, os.WriteFile(dir+".owner", fmt.Appendf(nil, "%d %d\n", p.PID, p.Start), 0o644))
	if cred != nil {
		assert.NilError(t, os.Chown(dir+".owner", int(cred.Uid), int(cred.Gid)))
	}
	// With TMPDIR elsewhere: every command sweeps $TMPDIR quietly at start.
	out, err := asUser(t, cred, []string{"TMPDIR=/tmp"}, 64, "session", "gc", "--root", root)
	assert.NilError(t, err, "session gc")
	assert.Check(t, is.Equal(out, dir+"\n"))
	assertNothingLeft(t, root, canary)
}

// assertNothingLeft checks that root holds the host's canaries, intact,
// and nothing else.
func assertNothingLeft(t *testing.T, root, canary string) {
	t.Helper()
	entries, err := os.ReadDir(root)
	assert.NilError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Check(t, is.DeepEqual(names, []string{"outside"}), "left in %s", root)
	b, err := os.ReadFile(canary)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(string(b), "host canary"))
	st, err := os.Lstat(filepath.Dir(canary))
	assert.NilError(t, err)
	assert.Check(t, st.IsDir())
}
