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

	"sandboxlab/sandbox/cgroup"
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
	case "no-memory-controller":
		os.Exit(noMemoryControllerHelper(os.Args[len(os.Args)-1]))
	case "pid-reuse":
		os.Exit(pidReuseHelper())
	case "hold-slot":
		os.Exit(holdSlotHelper())
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

// noMemoryControllerHelper runs in a mount namespace of its own, where it
// takes the memory controller away (every cgroup mount that offers it), as
// on a machine without one, then asks for L6, which needs it, and for L5,
// which does not.
func noMemoryControllerHelper(marker string) int {
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		fmt.Println("setup:", err)
		return 1
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		fmt.Println("setup: making mounts private:", err)
		return 1
	}
	for _, line := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && strings.HasPrefix(f[4], "/sys/fs/cgroup") && (strings.Contains(line, "memory") || strings.Contains(line, " cgroup2 ")) {
			if err := syscall.Unmount(f[4], syscall.MNT_DETACH); err != nil {
				fmt.Println("setup: unmounting", f[4], err)
				return 1
			}
		}
	}
	cmd := Command{Path: "/usr/bin/python3", Args: []string{"-c", "import sys\nopen(sys.argv[1], 'w').write('ran')", marker}, Dir: filepath.Dir(marker)}
	_, err = Run(context.Background(), MustPreset(6), cmd)
	fmt.Printf("L6: unavailable=%v no-cgroup=%v err=%v\n", errors.Is(err, ErrUnavailable), errors.Is(err, cgroup.ErrUnavailable), err)
	res, err := Run(context.Background(), MustPreset(5), Command{Path: "/bin/true"})
	fmt.Printf("L5: err=%v reason=%v\n", err, res.Reason)
	return 0
}

// TestFailClosedWithoutMemoryController: L6 asks for a control group with
// a memory limit; where the machine has no memory controller the run is
// refused with the reason and a way out, never run without the limit.
func TestFailClosedWithoutMemoryController(t *testing.T) {
	skip.If(t, !HostRoot(), "taking the controller away needs a mount namespace of root's")
	root := testRoot(t)
	marker := filepath.Join(ownedDir(t, root, "out"), "ran")
	cmd := exec.Command("/proc/self/exe", "-test.run=^$", marker)
	cmd.Env = append(os.Environ(), helperEnv+"=no-memory-controller")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	assert.NilError(t, err, string(out))
	t.Log(strings.TrimSpace(string(out)))
	assert.Check(t, is.Contains(string(out), "L6: unavailable=true no-cgroup=true"), "the cause is wrapped, not flattened")
	assert.Check(t, is.Contains(string(out), "no usable control groups"), "the error gives the reason")
	assert.Check(t, is.Contains(string(out), "up to L5 need no control group"), "the error gives a way out")
	assert.Check(t, is.Contains(string(out), "L5: err=<nil> reason=exited"), "L5 needs no control group")
	_, err = os.Stat(marker)
	assert.Check(t, errors.Is(err, os.ErrNotExist), "the program ran although its memory limit was unavailable")
}
