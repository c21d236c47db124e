package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/skip"

	"sandboxlab/sandbox/reexec"
)

// The test binary doubles as a helper process (as in os/exec's tests):
// with this variable set it does one job instead of running the tests.
const helperEnv = "SANDBOXLAB_SANDBOX_TEST_HELPER"

func TestMain(m *testing.M) {
	reexec.Init() // the sandbox's init
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "fail-closed":
		os.Exit(failClosedHelper(os.Args[len(os.Args)-1]))
	default:
		fmt.Fprintf(os.Stderr, "unknown helper %q\n", os.Getenv(helperEnv))
		os.Exit(2)
	}
}

// failClosedHelper runs inside a user namespace of its own. It forbids
// further user namespaces there, as a locked-down machine would, and asks
// the sandbox for L3, which needs one.
func failClosedHelper(marker string) int {
	if err := os.WriteFile("/proc/sys/user/max_user_namespaces", []byte("0"), 0); err != nil {
		fmt.Println("setup:", err)
		return 1
	}
	_, err := Run(context.Background(), MustPreset(3), Command{
		Path: "/usr/bin/python3", Args: []string{"-c", "import sys\nopen(sys.argv[1], 'w').write('ran')", marker},
		Dir: filepath.Dir(marker),
	})
	fmt.Printf("unavailable=%v err=%v\n", errors.Is(err, ErrUnavailable), err)
	return 0
}

func TestFailClosed(t *testing.T) {
	root := testRoot(t)
	marker := filepath.Join(ownedDir(t, root, "out"), "ran")
	id := HostIdentity()
	cmd := exec.Command("/proc/self/exe", "-test.run=^$", marker)
	cmd.Env = append(os.Environ(), helperEnv+"=fail-closed")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: id.UID, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: id.GID, Size: 1}},
		Credential:  &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true},
	}
	out, err := cmd.CombinedOutput()
	assert.NilError(t, err, string(out))
	t.Log(strings.TrimSpace(string(out)))
	assert.Check(t, is.Contains(string(out), "unavailable=true"))
	assert.Check(t, is.Contains(string(out), "creating namespaces"), "the error gives the kernel's reason")
	_, err = os.Stat(marker)
	assert.Check(t, errors.Is(err, os.ErrNotExist), "the program ran although isolation was unavailable")
}

// TestAsUnprivilegedUser re-runs the layer tests as an ordinary user (uid
// 65534) with unprivileged user namespaces, the other way the sandbox is
// used. When the tests already run unprivileged there is nothing to add.
func TestAsUnprivilegedUser(t *testing.T) {
	skip.If(t, !HostRoot(), "the tests already run as uid %d", os.Geteuid())
	if b, err := os.ReadFile("/proc/sys/kernel/unprivileged_userns_clone"); err == nil && strings.TrimSpace(string(b)) == "0" {
		t.Skip("the kernel forbids unprivileged user namespaces (kernel.unprivileged_userns_clone=0)")
	}
	root := testRoot(t)
	// The test binary sits in a directory only root can enter: copy it out.
	self, err := os.Executable()
	assert.NilError(t, err)
	bin := filepath.Join(root, "sandbox.test")
	src, err := os.Open(self)
	assert.NilError(t, err)
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	assert.NilError(t, err)
	_, err = io.Copy(dst, src)
	src.Close()
	assert.NilError(t, err)
	assert.NilError(t, dst.Close())

	cmd := exec.Command(bin, "-test.run=^(TestLayersBite|TestTimeoutKillsTheWholeTree|TestFailClosed|TestNothingLeftBehind)$", "-test.count=1", "-test.v")
	cmd.Dir = root
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "TMPDIR=/tmp", "LANG=C.UTF-8"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(nobody.UID), Gid: uint32(nobody.GID), Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	assert.NilError(t, err, "as uid %d:\n%s", nobody.UID, out)
	assert.Check(t, is.Contains(string(out), "--- PASS: TestLayersBite"))
	assert.Check(t, is.Contains(string(out), "--- PASS: TestNothingLeftBehind"))
	// uid 65534 cannot make groups in root's hierarchies: unless a cgroup
	// v2 subtree is delegated to it, L6 must have been refused, not run.
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.subtree_control"); err != nil {
		assert.Check(t, is.Contains(string(out), "L6 left out"), "L6 ran for uid %d without control groups", nobody.UID)
	}
}
