package seccomp

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"

	"sandboxlab/sandbox/reexec"
)

// The test binary doubles as a helper process, as bubblewrap's
// try-syscall does: with helperEnv set, TestMain does one job instead of
// running the tests. Helpers run in user, mount, PID, UTS and IPC
// namespaces of their own, as root there mapped to an unprivileged host
// uid, so that a call the filter fails to refuse still cannot touch the
// host; the calls are made with invalid arguments besides.
const helperEnv = "SANDBOXLAB_SECCOMP_TEST_HELPER"

// helpers maps a helper's name to its job; it returns the exit code.
// Architecture-specific test files add theirs in init.
var helpers = map[string]func(args []string) int{
	"exec":  execHelper,
	"nonnp": noNewPrivsHelper,
}

func TestMain(m *testing.M) {
	reexec.Init() // the package's own helper (CompatEntry's probe)
	name := os.Getenv(helperEnv)
	if name == "" {
		os.Exit(m.Run())
	}
	// seccomp filters, like no_new_privs, belong to one thread: make
	// every call on this one, as the sandbox's init does.
	runtime.GOMAXPROCS(1)
	runtime.LockOSThread()
	h, ok := helpers[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown helper %q\n", name)
		os.Exit(2)
	}
	if !inOwnUserNamespace() {
		// A probe run bare as root changes the host (see PITFALLS.md).
		fmt.Fprintln(os.Stderr, "helper: refusing to run outside a user namespace of its own")
		os.Exit(3)
	}
	os.Exit(h(os.Args[1:]))
}

// inOwnUserNamespace reports whether this process is in a user namespace
// other than the initial one, whose uid map is the identity over all ids.
func inOwnUserNamespace() bool {
	b, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return !(len(f) == 3 && f[0] == "0" && f[1] == "0" && f[2] == "4294967295")
}

// setNoNewPrivs sets no_new_privs on the calling thread, as the init does.
func setNoNewPrivs() error {
	return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
}

// installFilter sets no_new_privs and installs the filter on the calling
// thread.
func installFilter() error {
	prog, err := Build()
	if err != nil {
		return err
	}
	if err := setNoNewPrivs(); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	return Install(prog)
}

// execHelper installs the filter and executes args[0] with args, the way
// the sandbox's init ends.
func execHelper(args []string) int {
	if err := installFilter(); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 4
	}
	err := unix.Exec(args[0], args, os.Environ())
	fmt.Fprintln(os.Stderr, "helper: exec:", err)
	return 5
}

// noNewPrivsHelper calls Install without no_new_privs.
func noNewPrivsHelper([]string) int {
	prog, err := Build()
	if err != nil {
		fmt.Println(err)
		return 4
	}
	err = Install(prog)
	fmt.Printf("install: %v\n", err)
	if errors.Is(err, ErrNoNewPrivs) {
		return 0
	}
	return 1
}

// helperIdentity is the host uid and gid the helper's root is mapped to:
// never host root (65534 when the tests run as root), so a call the filter
// lets through acts with no host privilege.
func helperIdentity() (uid, gid int) {
	if os.Geteuid() == 0 {
		return 65534, 65534
	}
	return os.Geteuid(), os.Getegid()
}

// runHelper runs helper name with args in namespaces of its own and
// returns its output and state. It skips the test where user namespaces
// are unavailable.
func runHelper(t *testing.T, name string, args ...string) (stdout, stderr string, state *os.ProcessState) {
	t.Helper()
	uid, gid := helperIdentity()
	cmd := exec.Command("/proc/self/exe", args...)
	cmd.Dir = "/"
	cmd.Env = []string{helperEnv + "=" + name, "PATH=/usr/bin:/bin", "LANG=C.UTF-8",
		"HOME=/nonexistent", "TMPDIR=/tmp"}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID |
			syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
		Credential:  &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true},
		Pdeathsig:   syscall.SIGKILL,
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EACCES) {
			t.Skipf("no user namespace for the helper: %v", err)
		}
		t.Fatalf("starting helper %s: %v", name, err)
	}
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Wait()
	if cmd.ProcessState == nil {
		t.Fatalf("helper %s: %v", name, err)
	}
	return out.String(), errb.String(), cmd.ProcessState
}

func TestInstallWantsNoNewPrivs(t *testing.T) {
	build(t)
	out, stderr, st := runHelper(t, "nonnp")
	assert.Check(t, st.Success(), "stdout:\n%s\nstderr:\n%s", out, stderr)
}
