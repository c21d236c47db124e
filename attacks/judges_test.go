package attacks

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/procfs"
)

// judged builds a finished cell at level with result r, as the runner
// leaves it for a judge (isolation as the policy asks).
func judged(t *testing.T, level int, r sandbox.Result) *env {
	t.Helper()
	fx, err := makeFixtures(t.TempDir())
	assert.NilError(t, err)
	t.Cleanup(func() { fx.remove() })
	e := &env{policy: sandbox.MustPreset(level), fx: fx, res: &r}
	e.session, err = sandbox.NewSession(sandbox.Options{Policy: e.policy, Root: fx.root})
	assert.NilError(t, err)
	t.Cleanup(func() { e.session.Close() })
	e.fillFromPolicy()
	e.iso.seen, e.iso.programSeen = true, true
	return e
}

// setUp runs a's setup on e, as the runner does before the session
// opens, and runs what it registered for cleanup at the end of the test.
func setUp(t *testing.T, e *env, a setupper) {
	t.Helper()
	assert.NilError(t, a.setup(e))
	t.Cleanup(func() { assert.Check(t, e.undo.Clean()) })
}

func TestJudgeRunawayLoop(t *testing.T) {
	e := judged(t, 0, sandbox.Result{Reason: sandbox.ReasonSignal})
	v := (&runawayLoop{aliveAtCheck: []procfs.Proc{{PID: 42}}}).judge(e)
	assert.Check(t, v.escaped)
	assert.Check(t, is.Contains(v.evidence, "pid 42 still running"))

	// The program's word counts for nothing: a timed-out run whose
	// process the host still sees is an escape.
	e = judged(t, 1, sandbox.Result{Reason: sandbox.ReasonTimeout, TimedOut: true})
	e.aliveAfter = []procfs.Proc{{PID: 7}}
	assert.Check(t, (&runawayLoop{}).judge(e).escaped)

	e = judged(t, 1, sandbox.Result{Reason: sandbox.ReasonTimeout, TimedOut: true, Wall: 1500 * time.Millisecond})
	assert.Check(t, is.Equal((&runawayLoop{}).judge(e).stoppedBy, "wall clock"))
	e = judged(t, 1, sandbox.Result{Reason: sandbox.ReasonCPU})
	assert.Check(t, is.Equal((&runawayLoop{}).judge(e).stoppedBy, "CPU limit"))
	e = judged(t, 1, sandbox.Result{Reason: sandbox.ReasonExited, ExitCode: 1, Stderr: "Traceback\nNameError: x\n"})
	assert.Check(t, is.Equal((&runawayLoop{}).judge(e).stoppedBy, "unexpected: exited 1, NameError: x"))
}

func TestWatchRunawayLoopTimesFromFirstSight(t *testing.T) {
	r := &runawayLoop{}
	start := time.Now()
	procs := []procfs.Proc{{PID: os.Getpid()}} // alive, no SIGKILL pending
	assert.Check(t, !r.watch(nil, start, nil), "nothing seen yet")
	assert.Check(t, !r.watch(nil, start.Add(time.Second), procs))
	assert.Check(t, !r.watch(nil, start.Add(time.Second+runawayCheck-time.Millisecond), procs))
	assert.Check(t, r.watch(nil, start.Add(time.Second+runawayCheck), procs))
	assert.Check(t, is.Len(r.aliveAtCheck, 1))
}

func TestJudgeMemoryHog(t *testing.T) {
	e := judged(t, 0, sandbox.Result{Reason: sandbox.ReasonExited})
	assert.Check(t, (&memoryHog{peak: memoryHogSize + (12 << 20), peakPID: 9}).judge(e).escaped)

	e = judged(t, 1, sandbox.Result{Reason: sandbox.ReasonMemory, OOM: true, ExitCode: 1, Stderr: "OSError: [Errno 12] Cannot allocate memory"})
	v := (&memoryHog{peak: 14 << 20}).judge(e)
	assert.Check(t, is.Equal(v.stoppedBy, "address-space limit"))
	assert.Check(t, is.Contains(v.evidence, "the result says memory"))

	// The limit held but the result lost the flag: still stopped, and the
	// evidence says so.
	e = judged(t, 1, sandbox.Result{Reason: sandbox.ReasonExited, ExitCode: 1})
	v = (&memoryHog{}).judge(e)
	assert.Check(t, is.Equal(v.stoppedBy, "address-space limit"))
	assert.Check(t, is.Contains(v.evidence, "does not say memory"))
}

// TestMemoryFanoutCountsWhatWasHeldAtOnce: a look that read a process
// holding 200 MiB and then, the process killed by the limit, the next one
// holding the same memory counts once; processes that hold their memory
// across two looks count in full.
func TestMemoryFanoutCountsWhatWasHeldAtOnce(t *testing.T) {
	const mib = 1 << 20
	raced := map[int]int64{10: 200 * mib, 11: 200 * mib}
	after := map[int]int64{11: 200 * mib}
	assert.Check(t, is.Equal(heldAtOnce(raced, after), int64(200*mib)))
	assert.Check(t, is.Equal(heldAtOnce(nil, raced), int64(0)), "one look proves nothing")
	holding := map[int]int64{10: 200 * mib, 11: 190 * mib, 12: 200 * mib}
	assert.Check(t, is.Equal(heldAtOnce(holding, holding), int64(590*mib)))
	growing := map[int]int64{10: 100 * mib, 11: 190 * mib, 12: 200 * mib}
	assert.Check(t, is.Equal(heldAtOnce(growing, holding), int64(490*mib)))
}

func TestJudgeOutputFlood(t *testing.T) {
	// More than the cap came back.
	e := judged(t, 1, sandbox.Result{Stdout: strings.Repeat("x", outputCapChars+1), StdoutBytes: 50 << 20})
	assert.Check(t, (&outputFlood{}).judge(e).escaped)

	// The cap held for what came back, but the harness held it all.
	e = judged(t, 1, sandbox.Result{Stdout: strings.Repeat("x", 7989), StdoutBytes: 50 << 20})
	v := (&outputFlood{allocBig: 64 << 20}).judge(e)
	assert.Check(t, v.escaped)
	assert.Check(t, is.Contains(v.evidence, "held"))

	// Many small allocations (the process monitor's) are not held output.
	e = judged(t, 3, sandbox.Result{Stdout: strings.Repeat("é", 7989), StdoutBytes: 50 << 20})
	o := &outputFlood{allocated: 40 << 20, allocBig: 100 << 10}
	assert.Check(t, is.Equal(o.judge(e).stoppedBy, "output cap"), "characters, not bytes, are counted")
}

// held keeps what TestOutputFloodMeasuresTheRun allocates on the heap.
var held []byte

func TestOutputFloodMeasuresTheRun(t *testing.T) {
	o := &outputFlood{}
	o.beforeRun(nil)
	held = make([]byte, 1<<20)
	o.afterRun(nil)
	assert.Check(t, o.allocBig >= uint64(len(held)), "big: %d", o.allocBig)
	assert.Check(t, o.allocated >= o.allocBig)
}

func TestJudgeForkBomb(t *testing.T) {
	e := judged(t, 0, sandbox.Result{Reason: sandbox.ReasonSignal})
	assert.Check(t, (&forkBomb{overFor: 120 * time.Millisecond, maxProcs: 40}).judge(e).escaped)

	// Over the cap for a moment only: the monitor stopped it.
	e = judged(t, 3, sandbox.Result{Reason: sandbox.ReasonProcesses})
	assert.Check(t, is.Equal((&forkBomb{overFor: 8 * time.Millisecond, maxProcs: 34}).judge(e).stoppedBy, "process-cap monitor"))

	e = judged(t, 3, sandbox.Result{Reason: sandbox.ReasonTimeout, Stderr: "fork failed: [Errno 11] Resource temporarily unavailable\n"})
	assert.Check(t, is.Equal((&forkBomb{}).judge(e).stoppedBy, "fork refused"))
}

func TestWatchForkBombNeedsASustainedCount(t *testing.T) {
	// A count over the cap that drops back resets the stretch.
	f := &forkBomb{overSince: time.Now().Add(-time.Second)}
	assert.Check(t, !f.watch(nil, time.Now(), nil))
	assert.Check(t, f.overSince.IsZero())
	assert.Check(t, is.Equal(f.overFor, time.Duration(0)))
}

func TestJudgesNameTheLayerTheHostSaw(t *testing.T) {
	// The policy of L3 asks for a PID namespace; when the host saw the
	// program in the host's, the namespace gets no credit.
	e := judged(t, 3, sandbox.Result{Reason: sandbox.ReasonExited})
	e.iso.ownPID = false
	assert.Check(t, is.Equal(lingeringChild{}.judge(e).stoppedBy, "sweep of the session"))
	snoop := &hostProcessSnoop{}
	setUp(t, e, snoop)
	assert.Check(t, is.Equal(snoop.judge(e).stoppedBy, "user namespace"))
	assert.Check(t, strings.HasPrefix(detachedDaemon{}.judge(e).stoppedBy, "unexpected: "))

	e = judged(t, 4, sandbox.Result{Reason: sandbox.ReasonExited, ExitCode: 1, Stderr: "connect failed: errno 101 (Network is unreachable)"})
	x := &exfiltrate{}
	setUp(t, e, x)
	assert.Check(t, is.Equal(x.judge(e).stoppedBy, "network namespace: ENETUNREACH"))
	e.iso.ownNet = false
	assert.Check(t, strings.HasPrefix(x.judge(e).stoppedBy, "unexpected: "))

	e = judged(t, 5, sandbox.Result{Reason: sandbox.ReasonExited, ExitCode: 1, Stderr: "unshare: errno 1 (Operation not permitted)"})
	assert.Check(t, is.Equal((&privilegedMount{}).judge(e).stoppedBy, "no capabilities"))
	e.iso.capBnd = 0x1ff
	assert.Check(t, is.Equal((&privilegedMount{}).judge(e).stoppedBy, "host identity"))
}

func TestSetupFixturesGoWithTheCell(t *testing.T) {
	// What an attack's setup makes, the cell's cleanup removes: the
	// canary is killed and reaped, the honeypot stops listening.
	fx, err := makeFixtures(t.TempDir())
	assert.NilError(t, err)
	e := &env{policy: sandbox.MustPreset(3), fx: fx, token: procfs.Tag()}
	snoop, x := &hostProcessSnoop{}, &exfiltrate{}
	assert.NilError(t, snoop.setup(e))
	assert.NilError(t, x.setup(e))
	assert.Check(t, snoop.canary.alive())
	assert.Check(t, is.Len(x.args(e), 2))
	assert.NilError(t, e.cleanup())
	assert.Check(t, !snoop.canary.alive())
	_, err = net.DialTimeout("tcp4", "127.0.0.1:"+strconv.Itoa(x.honeypot.Port()), time.Second)
	assert.Check(t, err != nil, "the honeypot still listens")
	_, err = os.Stat(fx.root)
	assert.Check(t, errors.Is(err, fs.ErrNotExist))
}

func TestJudgeFileAPISymlink(t *testing.T) {
	e := judged(t, 2, sandbox.Result{Reason: sandbox.ReasonExited})
	assert.NilError(t, os.Symlink(e.fx.hostSecret, filepath.Join(e.session.Dir(), linkName)))
	assert.Check(t, is.Equal(fileAPISymlink{}.judge(e).stoppedBy, "file API: link refused"))

	// A plain file that happens to hold other bytes is no escape.
	e = judged(t, 2, sandbox.Result{Reason: sandbox.ReasonExited})
	assert.NilError(t, os.WriteFile(filepath.Join(e.session.Dir(), linkName), []byte("report"), 0o644))
	assert.Check(t, is.Equal(fileAPISymlink{}.judge(e).stoppedBy, "unexpected: other content"))

	e = judged(t, 2, sandbox.Result{Reason: sandbox.ReasonExited})
	assert.Check(t, is.Equal(fileAPISymlink{}.judge(e).stoppedBy, "unexpected: no report.txt in the session directory"))
}

func TestJudgeHomeAndAppFixtures(t *testing.T) {
	e := judged(t, 4, sandbox.Result{Reason: sandbox.ReasonExited})
	p := &plantInHome{}
	setUp(t, e, p)
	assert.Check(t, !p.judge(e).escaped)
	assert.NilError(t, os.WriteFile(filepath.Join(e.fx.home, ".profile"), []byte("x"), 0o644))
	v := p.judge(e)
	assert.Check(t, v.escaped)
	assert.Check(t, is.Contains(v.evidence, ".profile added"))

	e = judged(t, 1, sandbox.Result{Reason: sandbox.ReasonExited})
	assert.Check(t, strings.HasPrefix(appDirOverwrite{}.judge(e).stoppedBy, "unexpected: "))
	assert.NilError(t, os.WriteFile(e.fx.appFile, []byte("planted"), 0o644))
	assert.Check(t, appDirOverwrite{}.judge(e).escaped)
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
