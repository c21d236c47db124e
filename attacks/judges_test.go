package attacks

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
)

// judged builds a finished trial at level with result r, as the runner
// leaves it for a judge (isolation as the policy asks).
func judged(t *testing.T, level int, r sandbox.Result) *trial {
	t.Helper()
	fx, err := makeFixtures(t.TempDir())
	assert.NilError(t, err)
	t.Cleanup(func() { fx.remove() })
	tr := &trial{policy: sandbox.MustPreset(level), fx: fx, res: &r}
	tr.session, err = sandbox.NewSession(sandbox.Options{Policy: tr.policy, Root: fx.root})
	assert.NilError(t, err)
	t.Cleanup(func() { tr.session.Close() })
	tr.fillFromPolicy()
	tr.iso.seen, tr.iso.programSeen = true, true
	return tr
}

func TestJudgeRunawayLoop(t *testing.T) {
	tr := judged(t, 0, sandbox.Result{Reason: sandbox.ReasonSignal})
	tr.aliveAtCheck = []procfs.Proc{{PID: 42}}
	v := judgeRunawayLoop(tr)
	assert.Check(t, v.escaped)
	assert.Check(t, is.Contains(v.evidence, "pid 42 still running"))

	// The program's word counts for nothing: a timed-out run whose
	// process the host still sees is an escape.
	tr = judged(t, 1, sandbox.Result{Reason: sandbox.ReasonTimeout, TimedOut: true})
	tr.aliveAfter = []procfs.Proc{{PID: 7}}
	assert.Check(t, judgeRunawayLoop(tr).escaped)

	tr = judged(t, 1, sandbox.Result{Reason: sandbox.ReasonTimeout, TimedOut: true, Wall: 1500 * time.Millisecond})
	assert.Check(t, is.Equal(judgeRunawayLoop(tr).stoppedBy, "wall clock"))
	tr = judged(t, 1, sandbox.Result{Reason: sandbox.ReasonCPU})
	assert.Check(t, is.Equal(judgeRunawayLoop(tr).stoppedBy, "CPU limit"))
	tr = judged(t, 1, sandbox.Result{Reason: sandbox.ReasonExited, ExitCode: 1, Stderr: "Traceback\nNameError: x\n"})
	assert.Check(t, is.Equal(judgeRunawayLoop(tr).stoppedBy, "unexpected: exited 1, NameError: x"))
}

func TestJudgeMemoryHog(t *testing.T) {
	tr := judged(t, 0, sandbox.Result{Reason: sandbox.ReasonExited})
	tr.peak, tr.peakPID = memoryHogSize+(12<<20), 9
	assert.Check(t, judgeMemoryHog(tr).escaped)

	tr = judged(t, 1, sandbox.Result{Reason: sandbox.ReasonMemory, OOM: true, ExitCode: 1, Stderr: "OSError: [Errno 12] Cannot allocate memory"})
	tr.peak = 14 << 20
	v := judgeMemoryHog(tr)
	assert.Check(t, is.Equal(v.stoppedBy, "address-space limit"))
	assert.Check(t, is.Contains(v.evidence, "the result says memory"))

	// The limit held but the result lost the flag: still stopped, and the
	// evidence says so.
	tr = judged(t, 1, sandbox.Result{Reason: sandbox.ReasonExited, ExitCode: 1})
	v = judgeMemoryHog(tr)
	assert.Check(t, is.Equal(v.stoppedBy, "address-space limit"))
	assert.Check(t, is.Contains(v.evidence, "does not say memory"))
}

func TestJudgeOutputFlood(t *testing.T) {
	// More than the cap came back.
	tr := judged(t, 1, sandbox.Result{Stdout: strings.Repeat("x", outputCapChars+1), StdoutBytes: 50 << 20})
	assert.Check(t, judgeOutputFlood(tr).escaped)

	// The cap held for what came back, but the harness held it all.
	tr = judged(t, 1, sandbox.Result{Stdout: strings.Repeat("x", 7989), StdoutBytes: 50 << 20})
	tr.allocBig = 64 << 20
	v := judgeOutputFlood(tr)
	assert.Check(t, v.escaped)
	assert.Check(t, is.Contains(v.evidence, "held"))

	// Many small allocations (the process monitor's) are not held output.
	tr = judged(t, 3, sandbox.Result{Stdout: strings.Repeat("é", 7989), StdoutBytes: 50 << 20})
	tr.allocated, tr.allocBig = 40<<20, 100<<10
	assert.Check(t, is.Equal(judgeOutputFlood(tr).stoppedBy, "output cap"), "characters, not bytes, are counted")
}

func TestJudgeForkBomb(t *testing.T) {
	tr := judged(t, 0, sandbox.Result{Reason: sandbox.ReasonSignal})
	tr.overFor, tr.maxProcs = 120*time.Millisecond, 40
	assert.Check(t, judgeForkBomb(tr).escaped)

	// Over the cap for a moment only: the monitor stopped it.
	tr = judged(t, 3, sandbox.Result{Reason: sandbox.ReasonProcesses})
	tr.overFor, tr.maxProcs = 8*time.Millisecond, 34
	assert.Check(t, is.Equal(judgeForkBomb(tr).stoppedBy, "process-cap monitor"))

	tr = judged(t, 3, sandbox.Result{Reason: sandbox.ReasonTimeout, Stderr: "fork failed: [Errno 11] Resource temporarily unavailable\n"})
	assert.Check(t, is.Equal(judgeForkBomb(tr).stoppedBy, "fork refused"))
}

func TestWatchForkBombNeedsASustainedCount(t *testing.T) {
	// A count over the cap that drops back resets the stretch.
	tr := &trial{}
	tr.overSince = time.Now().Add(-time.Second)
	assert.Check(t, !watchForkBomb(tr, time.Now(), nil))
	assert.Check(t, tr.overSince.IsZero())
	assert.Check(t, is.Equal(tr.overFor, time.Duration(0)))
}

func TestJudgesNameTheLayerTheHostSaw(t *testing.T) {
	// The policy of L3 asks for a PID namespace; when the host saw the
	// program in the host's, the namespace gets no credit.
	tr := judged(t, 3, sandbox.Result{Reason: sandbox.ReasonExited})
	tr.iso.ownPID = false
	assert.Check(t, is.Equal(judgeLingeringChild(tr).stoppedBy, "sweep of the session"))
	tr.canary = startCanaryForTest(t)
	assert.Check(t, is.Equal(judgeHostProcessSnoop(tr).stoppedBy, "user namespace"))
	assert.Check(t, strings.HasPrefix(judgeDetachedDaemon(tr).stoppedBy, "unexpected: "))

	tr = judged(t, 4, sandbox.Result{Reason: sandbox.ReasonExited, ExitCode: 1, Stderr: "connect failed: errno 101 (Network is unreachable)"})
	tr.honeypot, _ = evidence.StartHoneypot()
	tr.honeypot.Close()
	assert.Check(t, is.Equal(judgeExfiltrate(tr).stoppedBy, "network namespace: ENETUNREACH"))
	tr.iso.ownNet = false
	assert.Check(t, strings.HasPrefix(judgeExfiltrate(tr).stoppedBy, "unexpected: "))

	tr = judged(t, 5, sandbox.Result{Reason: sandbox.ReasonExited, ExitCode: 1, Stderr: "unshare: errno 1 (Operation not permitted)"})
	assert.Check(t, is.Equal(judgePrivilegedMount(tr).stoppedBy, "no capabilities"))
	tr.iso.capBnd = 0x1ff
	assert.Check(t, is.Equal(judgePrivilegedMount(tr).stoppedBy, "host identity"))
}

// startCanaryForTest starts a canary for a judge that only asks whether
// it is alive.
func startCanaryForTest(t *testing.T) *canary {
	t.Helper()
	c, err := startCanary()
	assert.NilError(t, err)
	t.Cleanup(c.stop)
	return c
}

func TestJudgeFileAPISymlink(t *testing.T) {
	tr := judged(t, 2, sandbox.Result{Reason: sandbox.ReasonExited})
	assert.NilError(t, os.Symlink(tr.fx.hostSecret, filepath.Join(tr.session.Dir(), linkName)))
	assert.Check(t, is.Equal(judgeFileAPISymlink(tr).stoppedBy, "file API: link refused"))

	// A plain file that happens to hold other bytes is no escape.
	tr = judged(t, 2, sandbox.Result{Reason: sandbox.ReasonExited})
	assert.NilError(t, os.WriteFile(filepath.Join(tr.session.Dir(), linkName), []byte("report"), 0o644))
	assert.Check(t, is.Equal(judgeFileAPISymlink(tr).stoppedBy, "unexpected: other content"))

	tr = judged(t, 2, sandbox.Result{Reason: sandbox.ReasonExited})
	assert.Check(t, is.Equal(judgeFileAPISymlink(tr).stoppedBy, "unexpected: no report.txt in the session directory"))
}

func TestJudgeHomeAndAppFixtures(t *testing.T) {
	tr := judged(t, 4, sandbox.Result{Reason: sandbox.ReasonExited})
	assert.Check(t, !judgePlantInHome(tr).escaped)
	assert.NilError(t, os.WriteFile(filepath.Join(tr.fx.home, ".profile"), []byte("x"), 0o644))
	v := judgePlantInHome(tr)
	assert.Check(t, v.escaped)
	assert.Check(t, is.Contains(v.evidence, ".profile added"))

	tr = judged(t, 1, sandbox.Result{Reason: sandbox.ReasonExited})
	assert.Check(t, strings.HasPrefix(judgeAppDirOverwrite(tr).stoppedBy, "unexpected: "))
	assert.NilError(t, os.WriteFile(tr.fx.appFile, []byte("planted"), 0o644))
	assert.Check(t, judgeAppDirOverwrite(tr).escaped)
}

func TestFixturesBelongToTheProgram(t *testing.T) {
	fx, err := makeFixtures(t.TempDir())
	assert.NilError(t, err)
	defer fx.remove()
	id := sandbox.HostIdentity()
	for _, p := range []string{fx.home, fx.sshKey, fx.appDir, fx.appFile} {
		st, err := os.Stat(p)
		assert.NilError(t, err)
		assert.Check(t, is.Equal(int(st.Sys().(*syscall.Stat_t).Uid), id.UID), p)
	}
	st, err := os.Stat(fx.sshKey)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(st.Mode().Perm(), os.FileMode(0o600)))
	st, err = os.Stat(fx.hostSecret)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(int(st.Sys().(*syscall.Stat_t).Uid), os.Geteuid()))
	assert.Check(t, is.Equal(st.Mode().Perm(), os.FileMode(0o600)))
	assert.Check(t, is.Contains(strings.Join(fx.env, "\n"), apiKeyVar+"="+fx.apiKey))
	assert.Check(t, is.Equal(os.Getenv(apiKeyVar), ""), "the harness's own environment changed")
}

func TestSnapshotChanges(t *testing.T) {
	dir := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "a"), []byte("1"), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "b"), []byte("1"), 0o644))
	before, err := snapshot(dir)
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "a"), []byte("2"), 0o644))
	assert.NilError(t, os.Remove(filepath.Join(dir, "b")))
	assert.NilError(t, os.Symlink("/etc/passwd", filepath.Join(dir, "c")))
	after, err := snapshot(dir)
	assert.NilError(t, err)
	got := changes(before, after)
	assert.Check(t, is.Len(got, 3))
	assert.Check(t, is.Contains(strings.Join(got, ","), "a changed"))
	assert.Check(t, is.Contains(strings.Join(got, ","), "b removed"))
	assert.Check(t, is.Contains(strings.Join(got, ","), "c added"))
}
