package attacks

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/attacks/backends"
	"sandboxlab/report"
	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
	vocab "sandboxlab/verdict"
)

// sandboxTempDir makes a directory for the cells' fixtures where the CLI
// makes them (evidence.FixtureRoot), outside /tmp: a profile that makes
// /tmp writable (sandbox-runtime's does) would otherwise make every
// fixture writable, and the column would not be the one the CLI shows.
func sandboxTempDir(t *testing.T) string {
	t.Helper()
	root, err := evidence.FixtureRoot()
	assert.NilError(t, err)
	dir, err := os.MkdirTemp(root, "sandboxlab-backends-test-")
	assert.NilError(t, err)
	assert.NilError(t, os.Chmod(dir, 0o711))
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// profile returns the shipped profile name as a column, or skips the
// test, saying why, when its sandbox is not installed here.
func profile(t *testing.T, name string) backends.Sandbox {
	t.Helper()
	sb, err := backends.Resolve(name, backends.Shipped(), sandbox.Levels)
	assert.NilError(t, err)
	if _, err := exec.LookPath(sb.Profile.Command[0]); err != nil {
		t.Skipf("%s is not installed here (%v): its column is not checked", sb.Profile.Command[0], err)
	}
	return sb
}

// bubblewrap returns the shipped bubblewrap profile as a column, or skips
// the test, saying why, when bwrap is missing or cannot make its
// namespaces on this machine as the program's identity (unprivileged user
// namespaces off). Whatever else keeps the column from running is the
// harness's fault, and fails the test.
func bubblewrap(t *testing.T) backends.Sandbox {
	t.Helper()
	sb := profile(t, "bubblewrap")
	path, _ := exec.LookPath(sb.Profile.Command[0])
	cmd := exec.Command(path, "--unshare-all", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "/bin/true")
	if sandbox.HostRoot() {
		id := sandbox.HostIdentity()
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(id.UID), Gid: uint32(id.GID), Groups: []uint32{}}}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("bubblewrap cannot make its namespaces here as uid %d (%v: %s): its column is not checked", sandbox.HostIdentity().UID, err, out)
	}
	return sb
}

// assertNoGroupsLeft checks that no control group of this process's
// backend runs remains.
func assertNoGroupsLeft(t *testing.T) {
	t.Helper()
	for _, ctl := range []string{"/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids", "/sys/fs/cgroup"} {
		left, _ := filepath.Glob(filepath.Join(ctl, "sandboxlab-run-"+strconv.Itoa(os.Getpid())+"-*"))
		assert.Check(t, is.Len(left, 0), "control groups left in %s", ctl)
	}
}

// want is a pinned cell: its state and, where the host names one, the
// mechanism.
type want struct {
	state     report.CellState
	mechanism string
}

// bubblewrapColumn is the shipped bubblewrap profile's column (the flags
// sandbox-runtime gives bwrap) as measured on this kind of machine: the
// state of each attack and, where the host names one, the mechanism. It
// is pinned because bubblewrap is the most stable peer here: a change in
// how the harness runs, holds, observes or judges a backend shows in it.
var bubblewrapColumn = map[string]want{
	"runaway_loop":       {report.Escaped, ""},                          // no time limit: the harness stopped it
	"memory_hog":         {report.Escaped, ""},                          // no memory limit
	"output_flood":       {report.Escaped, ""},                          // no output cap
	"disk_filler":        {report.Escaped, ""},                          // the working directory is writable, no file-size limit
	"fd_hoarder":         {report.Escaped, ""},                          // no descriptor limit
	"lingering_child":    {report.Stopped, "PID namespace"},             // the namespace ends with the program
	"env_secrets":        {report.Escaped, ""},                          // the environment passes through
	"app_dir_overwrite":  {report.Stopped, "private working directory"}, // --chdir {workdir}; / is read-only
	"fork_bomb":          {report.Escaped, ""},                          // no process cap
	"detached_daemon":    {report.Stopped, "PID namespace"},
	"host_process_snoop": {report.Stopped, "PID namespace: own /proc"},
	"exfiltrate":         {report.Stopped, "network namespace"}, // loopback is up: ECONNREFUSED
	"read_ssh_key":       {report.Stopped, ""},                  // a tmpfs over ~/.ssh, not over the home
	"plant_in_home":      {report.Stopped, ""},                  // read-only
	"privileged_mount":   {report.Escaped, ""},                  // a nested user namespace is allowed
	"file_api_symlink":   {report.NotApplicable, ""},
	"leave_host_state":   {report.Escaped, ""}, // /tmp is the host's, and so is IPC
	"read_other_session": {report.Escaped, ""}, // siblings are in sight and the same uid
	"host_socket":        {report.Escaped, ""}, // srt's seccomp helper, which would refuse AF_UNIX, is not in the profile
	"steal_keyring":      {report.Escaped, ""}, // the session keyring is inherited
	"kernel_surface":     {report.Escaped, ""}, // no seccomp filter
	"compat_syscall":     {report.Escaped, ""},
	"write_outside":      {report.Stopped, ""}, // read-only
	"memory_fanout":      {report.Escaped, ""},
}

// podmanColumn is the shipped podman profile's column as measured here,
// root and rootless alike: what the notes' container example with the
// usual hardening stops, and what it does not. Containers "depend on
// setup": these are this setup's.
var podmanColumn = map[string]want{
	"runaway_loop":       {report.Escaped, ""},                          // no time limit: the harness stopped it
	"memory_hog":         {report.Escaped, ""},                          // --memory bounds resident memory, not the address space the hog maps
	"output_flood":       {report.Escaped, ""},                          // no output cap
	"disk_filler":        {report.Escaped, ""},                          // the bound working directory has no quota
	"fd_hoarder":         {report.Escaped, ""},                          // --ulimit nofile is the host's hard limit
	"lingering_child":    {report.Stopped, "PID namespace"},             // the container ends with its first process
	"env_secrets":        {report.Stopped, "scrubbed environment"},      // podman passes no host variable
	"app_dir_overwrite":  {report.Stopped, "private working directory"}, // -w {workdir}; the app's directory is not in the root
	"fork_bomb":          {report.Escaped, ""},                          // podman's pids limit (2048) is far above 16
	"detached_daemon":    {report.Stopped, "PID namespace"},
	"host_process_snoop": {report.Stopped, "PID namespace: own /proc"},
	"exfiltrate":         {report.Stopped, "network namespace"}, // --network none: loopback up, ECONNREFUSED
	"read_ssh_key":       {report.Stopped, ""},                  // the home is not in the container's root
	"plant_in_home":      {report.Stopped, ""},
	"privileged_mount":   {report.Escaped, ""}, // podman's seccomp allows a nested user namespace (a tmpfs in it)
	"file_api_symlink":   {report.NotApplicable, ""},
	"leave_host_state":   {report.Stopped, "private scratch directories, IPC namespace"},
	"read_other_session": {report.Stopped, ""}, // sibling sessions are not bound in
	"host_socket":        {report.Stopped, ""}, // the host's socket is not in the root
	"steal_keyring":      {report.Stopped, ""}, // runc gives the container a session keyring of its own
	"kernel_surface":     {report.Stopped, ""}, // podman's seccomp profile: io_uring ENOSYS, userfaultfd EPERM
	"compat_syscall":     {report.Escaped, ""}, // podman's seccomp profile admits the x86 and x32 ABIs: int 0x80 gets through
	"write_outside":      {report.Stopped, ""}, // the shared directory is not in the root
	"memory_fanout":      {report.Escaped, ""}, // 512 MiB (root; rootless: none) is above the attack's 320 MiB bar
}

// runcColumn is runc as it ships: the same as podman's but for the
// seccomp filter it does not have.
var runcColumn = func() map[string]want {
	m := maps.Clone(podmanColumn)
	m["kernel_surface"] = want{report.Escaped, ""} // no seccomp filter: io_uring and userfaultfd both made
	return m
}()

// assertColumn runs the attacks of column under sb, checks each cell
// against it, and checks that nothing of any run is left. It returns the
// column's report.
func assertColumn(t *testing.T, sb backends.Sandbox, column map[string]want) *report.Sandboxes {
	t.Helper()
	tmp := sandboxTempDir(t)
	var only []string
	for _, id := range IDs() {
		if _, ok := column[id]; ok {
			only = append(only, id)
		}
	}
	assert.Check(t, is.Len(only, len(column)))
	var progress []string
	began := time.Now()
	rep, err := RunSandboxes(context.Background(), SandboxOptions{Sandboxes: []backends.Sandbox{sb}, Only: only, TempDir: tmp,
		Progress: func(c report.SandboxCell) { progress = append(progress, c.Name()) }})
	assert.NilError(t, err)
	assert.Assert(t, is.Len(rep.Sandboxes, 1))
	col := rep.Sandboxes[0]
	assert.Assert(t, col.Skipped == "", "%s did not run: %s", sb.Name(), col.Skipped)
	assert.Check(t, !col.HostRoot)
	assert.Check(t, col.Held != "")
	assert.Check(t, is.Len(rep.Cells, len(only)))
	assert.Check(t, is.Len(progress, len(only)))
	unnamed := 0
	for _, c := range rep.Cells {
		w := column[c.Attack]
		if why := evidence.Lacks(registry[c.Attack].needs); why != "" {
			// What the attack needs of the kernel is not here: n/a, whatever
			// the sandbox.
			w = want{report.NotApplicable, ""}
		}
		assert.Check(t, is.Equal(c.State, w.state), "%s: %s", c.Name(), c.Evidence)
		// A fast program may end before the host looks at it on a busy
		// machine; then no mechanism is named, and the state is the same.
		if c.Mechanism != "" || w.mechanism == "" {
			assert.Check(t, is.Equal(c.Mechanism, w.mechanism), "%s: %s", c.Name(), c.Evidence)
		} else {
			unnamed++
		}
		assert.Check(t, c.Evidence != "", c.Name())
	}
	t.Logf("%s: %d cells in %v; %d stopped cells could not name their mechanism: the host did not see the program in time",
		sb.Name(), len(rep.Cells), time.Since(began).Round(time.Millisecond), unnamed)
	runaway, _ := rep.Cell("runaway_loop", sb.Name())
	assert.Check(t, is.Contains(runaway.Evidence, "no limit of the sandbox's own: the harness stopped it"))
	assertNothingLeft(t, tmp)
	assertNoGroupsLeft(t)
	assertNoContainerLeft(t)
	return rep
}

// TestBubblewrapColumn runs every attack of both suites under the
// shipped bubblewrap profile (about 10 s) and pins each cell, then checks
// that nothing of any run is left.
func TestBubblewrapColumn(t *testing.T) {
	assertColumn(t, bubblewrap(t), bubblewrapColumn)
}

// container returns the shipped container profile name as a column, or
// skips the test, saying why, when its runtime is not installed or the
// harness cannot run it (rootful podman and runc need root). Whatever
// else keeps the column from running fails the test.
func container(t *testing.T, name string) backends.Sandbox {
	t.Helper()
	sb := profile(t, name)
	if sb.Profile.Starter() == backends.UserHarness && !sandbox.HostRoot() {
		t.Skipf("the %s column needs the harness to run as root", name)
	}
	if sb.Profile.Starter() == backends.UserThrowaway {
		if _, err := exec.LookPath("newuidmap"); err != nil {
			t.Skipf("rootless podman needs newuidmap (Debian's uidmap): %v", err)
		}
	}
	return sb
}

// TestPodmanColumn pins rootful podman's column (about 30 s).
func TestPodmanColumn(t *testing.T) {
	assertColumn(t, container(t, "podman"), podmanColumn)
}

// TestPodmanRootlessColumn pins rootless podman's column (about 45 s):
// the same cells, run by a throw-away user that is gone afterwards.
func TestPodmanRootlessColumn(t *testing.T) {
	rep := assertColumn(t, container(t, "podman-rootless"), podmanColumn)
	if sandbox.HostRoot() && os.Getenv(backends.RootlessUserEnv) == "" {
		assert.Check(t, is.Contains(rep.Sandboxes[0].About, "throw-away user"))
	}
}

// TestRuncColumn pins runc's column as it ships (about 15 s).
func TestRuncColumn(t *testing.T) {
	assertColumn(t, container(t, "runc"), runcColumn)
}

// assertNoContainerLeft checks that nothing of this process's container
// and guest runs is left: no state directory, throw-away user, container
// in the runtimes' default stores, control group, conmon or emulator.
func assertNoContainerLeft(t *testing.T) {
	t.Helper()
	owner := procfs.Owner()
	left, _ := filepath.Glob("/run/sbxlab-" + owner + "-*")
	assert.Check(t, is.Len(left, 0), "podman state directories left")
	passwd, _ := os.ReadFile("/etc/passwd")
	assert.Check(t, !strings.Contains(string(passwd), "sandboxlab throw-away user of "+owner), "a throw-away user is left")
	tag := "sandboxlab-" + procfs.TagPrefix(os.Getpid())
	groups, _ := filepath.Glob("/sys/fs/cgroup/*/" + tag + "*")
	assert.Check(t, is.Len(groups, 0), "runc's control groups left")
	assert.Check(t, is.Len(ourLibpodGroups(tag), 0), "podman's container groups left")
	for _, list := range [][]string{{"podman", "ps", "--all", "--format", "{{.Names}}"}, {"runc", "list", "--quiet"}} {
		if _, err := exec.LookPath(list[0]); err != nil || !sandbox.HostRoot() {
			continue
		}
		out, err := exec.Command(list[0], list[1:]...).Output()
		assert.Check(t, err, "%v", list)
		assert.Check(t, !strings.Contains(string(out), tag), "%v lists a container of ours: %s", list, out)
	}
	for _, p := range procfs.WithArgPrefix("/run/sbxlab-" + owner) {
		t.Errorf("a process of a podman run is left: %d %v", p.PID, procfs.Cmdline(p.PID))
	}
}

// ourLibpodGroups returns podman's control groups of the containers of
// ours (named with tag) that are left. Another test package may run a
// container of its own at the same time (cmd/sandboxlab's
// TestInsideAContainer): a group of a container podman names otherwise
// is not ours. A group whose container podman no longer knows is counted
// only while it still holds a process of ours.
func ourLibpodGroups(tag string) []string {
	groups, _ := filepath.Glob("/sys/fs/cgroup/*/libpod_parent/libpod-*")
	var ours []string
	for _, g := range groups {
		id := strings.TrimPrefix(filepath.Base(g), "libpod-")
		if name, err := exec.Command("podman", "inspect", "--format", "{{.Name}}", id).Output(); err == nil {
			if strings.Contains(string(name), tag) {
				ours = append(ours, g)
			}
			continue
		}
		procs, _ := os.ReadFile(filepath.Join(g, "cgroup.procs"))
		for _, f := range strings.Fields(string(procs)) {
			if pid, err := strconv.Atoi(f); err == nil && slices.ContainsFunc(procfs.Cmdline(pid), func(a string) bool { return strings.Contains(a, tag) }) {
				ours = append(ours, g)
				break
			}
		}
	}
	return ours
}

// TestEveryInstalledPeerRuns runs one attack under each shipped profile
// whose sandbox is installed: each runs the probe and the program, cuts
// the network, and leaves nothing behind. A sandbox that is missing is a
// skipped subtest with the reason.
func TestEveryInstalledPeerRuns(t *testing.T) {
	for _, p := range backends.Shipped() {
		t.Run(p.Name, func(t *testing.T) {
			if p.Driver == backends.DriverQEMU {
				t.Skip("a guest boots for each run: TestQEMUOneCell runs it")
			}
			sb := profile(t, p.Name)
			if p.Driver != backends.DriverPrefix {
				sb = container(t, p.Name)
			}
			tmp := sandboxTempDir(t)
			rep, err := RunSandboxes(context.Background(), SandboxOptions{Sandboxes: []backends.Sandbox{sb}, Only: []string{"exfiltrate"}, TempDir: tmp})
			assert.NilError(t, err)
			col := rep.Sandboxes[0]
			assert.Assert(t, col.Skipped == "", "%s did not run: %s", p.Name, col.Skipped)
			c, ok := rep.Cell("exfiltrate", p.Name)
			assert.Assert(t, ok)
			assert.Check(t, is.Equal(c.State, report.Stopped), c.Evidence)
			assert.Check(t, is.Contains(c.Evidence, "the honeypot received nothing"))
			assert.Check(t, col.StartMS > 0)
			assertNothingLeft(t, tmp)
			assertNoGroupsLeft(t)
			assertNoContainerLeft(t)
		})
	}
}

// TestQEMUOneCell runs one attack in a virtual machine (a boot for the
// probe and one for the cell: about 15–20 s under TCG) and logs the
// times: the guest has no network device, the column says which
// accelerator it used, the cell its phases, and nothing of the guest is
// left. Without Debian's kernel the column is a named skip.
func TestQEMUOneCell(t *testing.T) {
	sb := profile(t, "qemu")
	tmp := sandboxTempDir(t)
	began := time.Now()
	rep, err := RunSandboxes(context.Background(), SandboxOptions{Sandboxes: []backends.Sandbox{sb}, Only: []string{"exfiltrate"}, TempDir: tmp})
	assert.NilError(t, err)
	col := rep.Sandboxes[0]
	if strings.Contains(col.Skipped, "no guest kernel") {
		t.Skipf("the qemu column is skipped here: %s", col.Skipped)
	}
	assert.Assert(t, col.Skipped == "", "qemu did not run: %s", col.Skipped)
	c, ok := rep.Cell("exfiltrate", "qemu")
	assert.Assert(t, ok)
	t.Logf("qemu, one cell: %v in all (the column's set-up, a probe boot of %d ms, the cell: %d ms); %s",
		time.Since(began).Round(time.Millisecond), col.StartMS, c.MS, c.Evidence)
	assert.Check(t, is.Contains(col.About, "accelerator: "))
	assert.Check(t, is.Contains(col.About, "the guest's own limits: 512 MiB of memory, 1 vCPU"))
	assert.Check(t, !col.HostRoot)
	assert.Check(t, is.Equal(c.State, report.Stopped), c.Evidence)
	assert.Check(t, is.Equal(c.Mechanism, ""), "the host sees no process of the guest's to name a mechanism from")
	assert.Check(t, is.Contains(c.Evidence, "the honeypot received nothing"))
	assert.Check(t, is.Contains(c.Evidence, "Network is unreachable"), "no network device, not even loopback up")
	assert.Check(t, is.Regexp(`(tcg|kvm): boot \d+ ms, program \d+ ms, shutdown \d+ ms$`, c.Evidence))
	assertNothingLeft(t, tmp)
	assertNoGroupsLeft(t)
	assertNoContainerLeft(t)
	assertNoEmulatorLeft(t, tmp)
}

// assertNoEmulatorLeft checks that no emulator of a run below tmp runs.
func assertNoEmulatorLeft(t *testing.T, tmp string) {
	t.Helper()
	procs, _ := procfs.Scan()
	for _, p := range procs {
		args := procfs.Cmdline(p.PID)
		if len(args) > 0 && strings.HasSuffix(args[0], "qemu-system-x86_64") && strings.Contains(strings.Join(args, " "), tmp) {
			t.Errorf("an emulator of ours is left: %d", p.PID)
		}
	}
}

// TestCancelCleansUpABackend interrupts a runaway loop under bubblewrap:
// RunSandboxes returns the context's error, and nothing of the run, its
// control group or its fixtures is left.
func TestCancelCleansUpABackend(t *testing.T) {
	sb := bubblewrap(t)
	tmp := sandboxTempDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := RunSandboxes(ctx, SandboxOptions{Sandboxes: []backends.Sandbox{sb}, Only: []string{"runaway_loop"}, TempDir: tmp})
	assert.Check(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	assertNothingLeft(t, tmp)
	assertNoGroupsLeft(t)
}

// TestCancelCleansUpAContainer interrupts each container column while
// its runaway loop runs (once the host sees it): RunSandboxes returns the
// context's error, and nothing is left: no process, container, state
// directory, mount, control group or throw-away user.
func TestCancelCleansUpAContainer(t *testing.T) {
	for _, name := range []string{"podman", "podman-rootless", "runc"} {
		t.Run(name, func(t *testing.T) {
			sb := container(t, name)
			tmp := sandboxTempDir(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go cancelWhenRunning(ctx, cancel, "runaway_loop:")
			_, err := RunSandboxes(ctx, SandboxOptions{Sandboxes: []backends.Sandbox{sb}, Only: []string{"runaway_loop"}, TempDir: tmp})
			assert.Check(t, errors.Is(err, context.Canceled), "%v", err)
			assertNothingLeft(t, tmp)
			assertNoGroupsLeft(t)
			assertNoContainerLeft(t)
		})
	}
}

// cancelWhenRunning cancels once a program of this process's runs whose
// source holds marker (its first comment: "runaway_loop:") is alive.
func cancelWhenRunning(ctx context.Context, cancel context.CancelFunc, marker string) {
	for ctx.Err() == nil {
		for _, p := range procfs.WithArgPrefix(procfs.TagPrefix(os.Getpid())) {
			if args := procfs.Cmdline(p.PID); len(args) > 2 && args[0] == evidence.Python && strings.Contains(args[2], marker) {
				cancel()
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMissingSandboxIsSkipped: a sandbox that is not installed, and one
// that does not run the probe, are columns skipped with the reason, and
// have no cells that could read as stops.
func TestMissingSandboxIsSkipped(t *testing.T) {
	tmp := sandboxTempDir(t)
	missing := backends.Sandbox{Spec: "nsjail", Level: -1, Profile: &backends.Profile{Name: "nsjail", Command: []string{"/nonexistent/nsjail", "--"}}}
	broken, err := backends.Resolve("custom:/bin/false", nil, sandbox.Levels)
	assert.NilError(t, err)
	rep, err := RunSandboxes(context.Background(), SandboxOptions{Sandboxes: []backends.Sandbox{missing, broken}, Only: []string{"env_secrets"}, TempDir: tmp})
	assert.NilError(t, err)
	assert.Assert(t, is.Len(rep.Sandboxes, 2))
	assert.Check(t, is.Contains(rep.Sandboxes[0].Skipped, "/nonexistent/nsjail is not installed"))
	assert.Check(t, is.Contains(rep.Sandboxes[1].Skipped, "it did not run the harness's probe program: exit status 1"))
	assert.Check(t, is.Len(rep.Cells, 0))
	assertNothingLeft(t, tmp)
}

// TestHostRootGetsOnlyHarmlessAttacks: a backend that leaves the program
// host root (here none at all, started as the harness) is seen so by the
// probe; an attack harmless by construction runs, the others are n/a.
func TestHostRootGetsOnlyHarmlessAttacks(t *testing.T) {
	if !sandbox.HostRoot() {
		t.Skip("needs host root: only then can a backend start the program as host root")
	}
	tmp := sandboxTempDir(t)
	bare := backends.Sandbox{Spec: "bare", Level: -1, Profile: &backends.Profile{Name: "bare", Command: []string{"env"}, User: backends.UserHarness}}
	rep, err := RunSandboxes(context.Background(), SandboxOptions{Sandboxes: []backends.Sandbox{bare}, Only: []string{"env_secrets", "disk_filler"}, TempDir: tmp})
	assert.NilError(t, err)
	assert.Check(t, rep.Sandboxes[0].HostRoot)
	c, _ := rep.Cell("env_secrets", "bare")
	assert.Check(t, is.Equal(c.State, report.Escaped), c.Evidence)
	c, _ = rep.Cell("disk_filler", "bare")
	assert.Check(t, is.Equal(c.State, report.NotApplicable))
	assert.Check(t, is.Contains(c.Evidence, "not harmless by construction there: it writes 50 MiB in its working directory"))
	assertNothingLeft(t, tmp)
}

// TestSandboxlabColumn: a sandboxlab:L<n> column is the level matrix's
// cell, at any level whatever the attack's suite.
func TestSandboxlabColumn(t *testing.T) {
	tmp := sandboxTempDir(t)
	l2, err := backends.Resolve("sandboxlab:L2", nil, sandbox.Levels)
	assert.NilError(t, err)
	rep, err := RunSandboxes(context.Background(), SandboxOptions{Sandboxes: []backends.Sandbox{l2}, Only: []string{"env_secrets", "write_outside"}, TempDir: tmp})
	assert.NilError(t, err)
	c, _ := rep.Cell("env_secrets", "sandboxlab:L2")
	assert.Check(t, is.Equal(c.State, report.Stopped), c.Evidence)
	assert.Check(t, is.Equal(c.Mechanism, "scrubbed environment"))
	c, _ = rep.Cell("write_outside", "sandboxlab:L2")
	assert.Check(t, is.Equal(c.State, report.Escaped), "a hardening attack runs at a level below its suite's first stop: %s", c.Evidence)
	assert.DeepEqual(t, rep.Suites, map[string]vocab.Suite{"env_secrets": vocab.Course, "write_outside": vocab.Hardening})
	assertNothingLeft(t, tmp)
}

func TestSandboxSelection(t *testing.T) {
	l5, _ := backends.Resolve("sandboxlab:L5", nil, sandbox.Levels)
	n, err := SandboxOptions{Sandboxes: []backends.Sandbox{l5, l5}}.Cells()
	assert.NilError(t, err)
	assert.Check(t, is.Equal(n, 2*len(IDs())))
	_, err = SandboxOptions{Sandboxes: []backends.Sandbox{l5}, Only: []string{"nope"}}.Cells()
	assert.Check(t, errors.Is(err, ErrUsage))
	_, err = RunSandboxes(context.Background(), SandboxOptions{})
	assert.Check(t, errors.Is(err, ErrUsage))
}

// TestShape: what only the harness knows changes the judge's verdict on
// a backend's cell as designed, and never turns a run it could not judge
// into a stop.
func TestShape(t *testing.T) {
	b := &backend{}
	res := &sandbox.Result{Stderr: "Traceback\nPermissionError: no"}
	watchdog := &backends.Outcome{StoppedBy: backends.StopWatchdog, Wall: 8004 * time.Millisecond}
	ended := &backends.Outcome{}
	seen := isolation{seen: true}
	for _, tc := range []struct {
		name     string
		attack   string
		iso      isolation
		v        verdict
		run      backendRun
		state    report.CellState
		mech     string
		evidence string
	}{
		{"a loop the watchdog stopped escaped", "runaway_loop", isolation{}, stopped("unexpected: signal by SIGKILL", "ended"), backendRun{out: watchdog, started: true},
			report.Escaped, "", "no limit: stopped by the harness watchdog after 8004 ms"},
		{"a loop that never started is not judged", "runaway_loop", isolation{}, stopped("unexpected: signal", "ended"), backendRun{out: watchdog},
			report.NotApplicable, "", "not judged: the program did not start under this sandbox"},
		{"a watcher whose program the host never saw is n/a", "memory_hog", isolation{}, stopped("unexpected: exited 0", "no sample"), backendRun{out: ended, started: true},
			report.NotApplicable, "", "the host saw no process of the program"},
		{"a watcher that only names a layer is judged unseen (by the host's file)", "write_outside", isolation{}, stopped("unexpected: exited 0", "notes.txt unchanged"), backendRun{out: ended, started: true},
			report.Stopped, "", "notes.txt unchanged; it ended: exited 0" + unseenNote},
		{"a layer is not named from what the host did not see", "env_secrets", isolation{}, stopped("scrubbed environment", "not in the output"), backendRun{out: ended, started: true},
			report.Stopped, "", "not in the output" + unseenNote},
		{"an unexpected end is an unnamed mechanism", "read_ssh_key", seen, stopped("unexpected: exited 1, PermissionError: no", "not in the output (PermissionError: no)"), backendRun{out: ended, started: true},
			report.Stopped, "", "not in the output (PermissionError: no); it ended: exited 1"},
		{"a named layer stays named", "exfiltrate", seen, stopped("network namespace", "nothing received"), backendRun{out: ended, started: true},
			report.Stopped, "network namespace", "nothing received"},
		{"an escape while the backend hung says so", "lingering_child", seen, escaped("pid 9 alive after the run"), backendRun{out: watchdog, started: true},
			report.Escaped, "", "pid 9 alive after the run; the sandbox had not ended the run when the harness's watchdog stopped it after 8004 ms"},
		{"an escape counts without the start marker", "env_secrets", isolation{}, escaped("the output holds it"), backendRun{out: ended},
			report.Escaped, "", "the output holds it"},
		{"a backend that could not start is n/a", "env_secrets", isolation{}, verdict{}, backendRun{startErr: errors.New("exec: no")},
			report.NotApplicable, "", "not judged: the sandbox could not be started: exec: no"},
	} {
		s := registry[tc.attack]
		e := &env{iso: tc.iso, res: res}
		state, mech, ev := b.shape(s, s.new(), e, tc.v, tc.run)
		assert.Check(t, is.Equal(state, tc.state), tc.name)
		assert.Check(t, is.Equal(mech, tc.mech), tc.name)
		assert.Check(t, strings.Contains(ev, tc.evidence), "%s: %q", tc.name, ev)
	}
}

// TestStartMarker: the marker goes on the program's first line, so its
// line numbers stay, and result takes it out of the output again.
func TestStartMarker(t *testing.T) {
	src := withMarker("# a comment\nprint(1)\n", "tok")
	assert.Check(t, is.Equal(strings.Count(src, "\n"), 2))
	out, err := exec.Command(evidence.Python, "-c", src).CombinedOutput()
	assert.NilError(t, err)
	assert.Check(t, is.Equal(string(out), startMarker("tok")+"1\n"), "the marker comes first")
	m := startMarker("tok")
	r, started := result(&backends.Outcome{Stdout: []byte("1\n"), StdoutBytes: 2, Stderr: []byte(m), StderrBytes: int64(len(m))}, m)
	assert.Check(t, started)
	assert.Check(t, is.Equal(r.Stderr, ""))
	assert.Check(t, is.Equal(r.StderrBytes, int64(0)))
	_, started = result(&backends.Outcome{Stderr: []byte("bwrap: execvp: No such file")}, startMarker("tok"))
	assert.Check(t, !started)
}
