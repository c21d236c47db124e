package cgroup

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/poll"
	"gotest.tools/v3/skip"
)

// The v2 path on a real kernel. Where the unified hierarchy lacks memory
// and pids (these machines bind them to v1; a fresh cgroup2 mount in a new
// mount namespace shows the same single hierarchy, with hugetlb only), a
// controller it does have stands in for them: the kernel's rules for
// enabling it (listed in cgroup.controllers, no processes of one's own)
// are the same, and so are leaves, CLONE_INTO_CGROUP and cgroup.kill.
// Limits and v2 counters are checked against a fake tree (TestV2FakeTree).

const (
	v2HelperEnv = "SANDBOXLAB_CGROUP_V2_STANDIN"
	v2ParentEnv = "SANDBOXLAB_CGROUP_V2_PARENT"
)

func TestV2Real(t *testing.T) {
	skip.If(t, os.Geteuid() != 0, "needs root to make a group in the unified hierarchy for the helper")
	m, err := Detect()
	assert.NilError(t, err)
	skip.If(t, !writable(m.V2), "no writable cgroup v2 hierarchy (%q)", m.V2)
	ctls, err := readWords(m.V2, "cgroup.controllers")
	assert.NilError(t, err)
	standin := ""
	for _, c := range []string{"memory", "pids", "hugetlb", "io", "misc", "rdma"} {
		if ctls[c] {
			standin = c
			break
		}
	}
	skip.If(t, standin == "", "the unified hierarchy at %s offers no controller", m.V2)

	// Hand the stand-in down to the helper's group. This test's own group
	// is the hierarchy's root here (exempt from the no-internal-process
	// rule); elsewhere it may refuse, and then there is nothing to test.
	on, err := readWords(m.V2, "cgroup.subtree_control")
	assert.NilError(t, err)
	if !on[standin] {
		err := writeFile(m.V2, "cgroup.subtree_control", "+"+standin)
		skip.If(t, err != nil, "cannot enable %s below %s: %v", standin, m.V2, err)
		t.Cleanup(func() { writeFile(m.V2, "cgroup.subtree_control", "-"+standin) })
	}

	// The helper's group T stands for a delegated group holding the caller.
	name, err := newName()
	assert.NilError(t, err)
	parent := filepath.Join(m.V2, strings.Replace(name, "-run-", "-run-v2test-", 1))
	assert.NilError(t, os.Mkdir(parent, 0o755))
	t.Cleanup(func() {
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			if e.IsDir() {
				assert.Check(t, strings.HasPrefix(e.Name(), "sandboxlab-caller-"), "left behind: %s", e.Name())
				assert.Check(t, removeWhenFree(filepath.Join(parent, e.Name()), time.Now().Add(5*time.Second)))
			}
		}
		assert.Check(t, removeWhenFree(parent, time.Now().Add(5*time.Second)))
	})
	fd, err := syscall.Open(parent, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	assert.NilError(t, err)
	defer syscall.Close(fd)

	cmd := exec.Command(os.Args[0], "-test.run=^TestV2RealHelper$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), v2HelperEnv+"="+standin, v2ParentEnv+"="+parent)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	t.Logf("helper (stand-in controller %s):\n%s", standin, out)
	assert.NilError(t, err)
	assert.Assert(t, is.Contains(string(out), "--- PASS: TestV2RealHelper"))
}

// TestV2RealHelper runs in its own process, started by TestV2Real inside
// a group of its own, as a sandbox started in a delegated v2 group is.
func TestV2RealHelper(t *testing.T) {
	standin := os.Getenv(v2HelperEnv)
	if standin == "" {
		t.Skip("runs only as TestV2Real's helper")
	}
	parent := os.Getenv(v2ParentEnv)
	v2Required = []string{standin}

	m, err := Detect()
	assert.NilError(t, err)
	assert.Equal(t, m.V2, parent, "started straight into its group")

	// The parent holds this process, so the stand-in can be enabled only
	// after New has moved this process into a leaf of its own.
	g, err := New(Config{Mounts: &m})
	assert.NilError(t, err)
	defer g.Close()
	assert.Equal(t, g.Version(), 2)
	self, err := os.ReadFile("/proc/self/cgroup")
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(self), "/"+callerLeaf(os.Getpid())+"\n"))
	again, err := Detect()
	assert.NilError(t, err)
	assert.Check(t, is.Equal(again.V2, parent), "runs still go below the caller's group")
	on, err := readWords(parent, "cgroup.subtree_control")
	assert.NilError(t, err)
	assert.Check(t, on[standin], "%s enabled in %s", standin, parent)
	leaf := filepath.Join(parent, g.Name())
	assert.DeepEqual(t, g.Dirs(), []string{leaf})
	ctls, err := readWords(leaf, "cgroup.controllers")
	assert.NilError(t, err)
	assert.Check(t, ctls[standin], "the run's leaf gets %s", standin)

	// A second group reuses the enabled controller and the caller's leaf.
	g2, err := New(Config{Mounts: &again})
	assert.NilError(t, err)
	assert.NilError(t, g2.Close())

	// Started with CLONE_INTO_CGROUP: the shell reads its own cgroup
	// before doing anything else, and finds itself in the run's leaf.
	fd, err := g.FD()
	assert.NilError(t, err)
	direct := exec.Command("/bin/sh", "-c", `grep '^0::' /proc/$$/cgroup; exec sleep 600`)
	direct.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	direct.WaitDelay = 5 * time.Second
	out, err := direct.StdoutPipe()
	assert.NilError(t, err)
	assert.NilError(t, direct.Start())
	defer func() { direct.Process.Kill(); direct.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	assert.NilError(t, err)
	assert.Check(t, strings.HasPrefix(line, "0::/") && strings.HasSuffix(line, "/"+filepath.Base(parent)+"/"+g.Name()+"\n"), "got %q", line)

	// And one placed by Add, as on v1.
	added := startInGroup(t, g, "/bin/sleep", "600")
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		pids, err := g.procs()
		if err != nil {
			return poll.Error(err)
		}
		if len(pids) != 2 {
			return poll.Continue("%d processes in the group: %v", len(pids), pids)
		}
		return poll.Success()
	})
	assert.Check(t, exists(leaf, "cgroup.kill"), "Linux 5.14 or later has cgroup.kill")
	assert.NilError(t, g.Close())
	_, err = os.Stat(leaf)
	assert.Check(t, errors.Is(err, os.ErrNotExist), "left behind: %s", leaf)
	assertKilled(t, direct.Wait())
	assertKilled(t, added.cmd.Wait())
	assert.NilError(t, g.Close(), "Close is idempotent")
	_, err = g.FD()
	assert.ErrorContains(t, err, "closed")
	t.Logf("pid %s: moved to %s; run leaf %s; CLONE_INTO_CGROUP child saw %q", strconv.Itoa(os.Getpid()), callerLeaf(os.Getpid()), g.Name(), strings.TrimSpace(line))
}
