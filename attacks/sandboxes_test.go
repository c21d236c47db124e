package attacks

import (
	"context"
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

	"sandboxlab/attacks/backends"
	"sandboxlab/report"
	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
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

// bubblewrapColumn is the shipped bubblewrap profile's column (the flags
// sandbox-runtime gives bwrap) as measured on this kind of machine: the
// state of each attack and, where the host names one, the mechanism. It
// is pinned because bubblewrap is the most stable peer here: a change in
// how the harness runs, holds, observes or judges a backend shows in it.
var bubblewrapColumn = map[string]struct {
	state     report.CellState
	mechanism string
}{
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

// TestBubblewrapColumn runs every attack of both suites under the
// shipped bubblewrap profile (about 10 s) and pins each cell, then checks
// that nothing of any run is left.
func TestBubblewrapColumn(t *testing.T) {
	sb := bubblewrap(t)
	tmp := sandboxTempDir(t)
	var only []string
	for _, id := range IDs() {
		if _, ok := bubblewrapColumn[id]; ok {
			only = append(only, id)
		}
	}
	assert.Check(t, is.Len(only, len(bubblewrapColumn)))
	var progress []string
	rep, err := RunSandboxes(context.Background(), SandboxOptions{Sandboxes: []backends.Sandbox{sb}, Only: only, TempDir: tmp,
		Progress: func(c report.SandboxCell) { progress = append(progress, c.Name()) }})
	assert.NilError(t, err)
	assert.Assert(t, is.Len(rep.Sandboxes, 1))
	col := rep.Sandboxes[0]
	assert.Assert(t, col.Skipped == "", "bubblewrap did not run: %s", col.Skipped)
	assert.Check(t, !col.HostRoot)
	assert.Check(t, col.Held != "")
	assert.Check(t, is.Len(rep.Cells, len(only)))
	assert.Check(t, is.Len(progress, len(only)))
	unnamed := 0
	for _, c := range rep.Cells {
		want := bubblewrapColumn[c.Attack]
		if why := evidence.Lacks(registry[c.Attack].needs); why != "" {
			// What the attack needs of the kernel is not here: n/a, whatever
			// the sandbox.
			want = struct {
				state     report.CellState
				mechanism string
			}{report.NotApplicable, ""}
		}
		assert.Check(t, is.Equal(c.State, want.state), "%s: %s", c.Name(), c.Evidence)
		// A fast program may end before the host looks at it on a busy
		// machine; then no mechanism is named, and the state is the same.
		if c.Mechanism != "" || want.mechanism == "" {
			assert.Check(t, is.Equal(c.Mechanism, want.mechanism), "%s: %s", c.Name(), c.Evidence)
		} else {
			unnamed++
		}
		assert.Check(t, c.Evidence != "", c.Name())
	}
	t.Logf("%d stopped cells could not name their mechanism: the host did not see the program in time", unnamed)
	runaway, _ := rep.Cell("runaway_loop", "bubblewrap")
	assert.Check(t, is.Contains(runaway.Evidence, "no limit of the sandbox's own: the harness stopped it"))
	assertNothingLeft(t, tmp)
	assertNoGroupsLeft(t)
}

// TestEveryInstalledPeerRuns runs one attack under each shipped profile
// whose sandbox is installed: each runs the probe and the program, cuts
// the network, and leaves nothing behind. A sandbox that is missing is a
// skipped subtest with the reason.
func TestEveryInstalledPeerRuns(t *testing.T) {
	for _, p := range backends.Shipped() {
		t.Run(p.Name, func(t *testing.T) {
			sb := profile(t, p.Name)
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
		})
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
