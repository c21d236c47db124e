package procfs

import (
	"io"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestParseStatCommWithParens(t *testing.T) {
	// A real line's shape: utime and stime are fields 14 and 15 (5 and 3
	// ticks), starttime is field 22 (here 123456).
	line := "42 (a) b (c) S 7 8 9 34816 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 123456 1000 100"
	p, err := parseStat(42, []byte(line))
	assert.NilError(t, err)
	assert.DeepEqual(t, p, Proc{PID: 42, PPID: 7, PGID: 8, SID: 9, State: 'S', Comm: "a) b (c", Start: 123456, CPU: 80 * time.Millisecond})
}

func TestParseStatRejectsGarbage(t *testing.T) {
	_, err := parseStat(1, []byte("1 (x"))
	assert.Assert(t, err != nil)
}

func TestScanFindsSelf(t *testing.T) {
	procs, err := Scan()
	assert.NilError(t, err)
	var me *Proc
	for i := range procs {
		if procs[i].PID == os.Getpid() {
			me = &procs[i]
		}
	}
	assert.Assert(t, me != nil)
	assert.Check(t, is.Equal(me.PPID, os.Getppid()))
	assert.Check(t, me.Alive())
}

func TestDescendants(t *testing.T) {
	procs := []Proc{{PID: 1}, {PID: 2, PPID: 1}, {PID: 3, PPID: 2}, {PID: 4, PPID: 1}, {PID: 5, PPID: 9}}
	var got []int
	for _, p := range Descendants(procs, 2) {
		got = append(got, p.PID)
	}
	assert.DeepEqual(t, got, []int{3})
	assert.Check(t, is.Len(Descendants(procs, 1), 3))
}

func TestKilled(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	assert.NilError(t, cmd.Start())
	defer cmd.Wait()
	defer cmd.Process.Kill()
	assert.Check(t, !Killed(cmd.Process.Pid), "a sleeping process has no SIGKILL pending")
	cmd.Process.Kill()
	cmd.Wait()
	assert.Check(t, Killed(cmd.Process.Pid), "a process that is gone counts as killed")
}

func TestLivingLeavesOutTheNamespaceOfAKilledInit(t *testing.T) {
	const killed, running = "SigPnd:\t0000000000000100\n", "SigPnd:\t0000000000000000\n"
	status := map[int]string{
		// A namespace whose init (host PID 10) is killed: its other
		// processes, killed or not, are on their way out.
		10: killed + "NSpid:\t10\t1\n",
		11: running + "NSpid:\t11\t2\n",
		12: running + "NSpid:\t12\t3\n",
		// Another namespace whose init is not killed: one of its processes is.
		20: running + "NSpid:\t20\t1\n",
		21: killed + "NSpid:\t21\t2\n",
		22: running + "NSpid:\t22\t3\n",
		// The host's namespace: a killed process there dooms nobody else.
		30: killed + "NSpid:\t30\n",
		31: running + "NSpid:\t31\n",
		// 40 is gone.
	}
	ns := map[int]string{10: "a", 11: "a", 12: "a", 20: "b", 21: "b", 22: "b", 30: "host", 31: "host"}
	var procs []Proc
	for _, pid := range []int{10, 11, 12, 20, 21, 22, 30, 31, 40} {
		procs = append(procs, Proc{PID: pid})
	}
	got := living(procs, func(pid int) []byte {
		if s, ok := status[pid]; ok {
			return []byte(s)
		}
		return nil
	}, func(pid int) string { return ns[pid] })
	var pids []int
	for _, p := range got {
		pids = append(pids, p.PID)
	}
	assert.DeepEqual(t, pids, []int{20, 22, 31})
}

func TestLivingOnTheHost(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	assert.NilError(t, cmd.Start())
	defer cmd.Wait()
	defer cmd.Process.Kill()
	me, err := Stat(os.Getpid())
	assert.NilError(t, err)
	sleeper, err := Stat(cmd.Process.Pid)
	assert.NilError(t, err)
	assert.Check(t, is.Len(Living([]Proc{me, sleeper}), 2))
	cmd.Process.Kill()
	cmd.Wait()
	assert.Check(t, is.DeepEqual(Living([]Proc{me, sleeper}), []Proc{me}), "a process that is gone is not living")
}

func TestStatusField(t *testing.T) {
	status := []byte("Name:\tpython3\nSigPnd:\t0000000000000100\nVmPeak:\t 1062620 kB\nCapEff:\t000001ffffffffff\n")
	assert.Check(t, is.Equal(StatusField(status, "Name"), "python3"))
	assert.Check(t, is.Equal(StatusField(status, "VmPeak"), "1062620 kB"))
	assert.Check(t, is.Equal(StatusField(status, "CapEff"), "000001ffffffffff"))
	assert.Check(t, is.Equal(StatusField(status, "CapBnd"), ""))
	assert.Check(t, is.Equal(StatusField(status, "Sig"), ""), "a field is matched by its whole name")
}

// TestTreeMatchesDescendants: the walk through the children lists finds
// what a scan of every process finds below the same root, a grandchild
// included.
func TestTreeMatchesDescendants(t *testing.T) {
	// sh forks a sleep and a subshell that forks another: sh -> sleep,
	// sh -> sh -> sleep.
	cmd := exec.Command("/bin/sh", "-c", "sleep 30 & (sleep 30; :) & wait")
	assert.NilError(t, cmd.Start())
	pids := func(ps []Proc) []int {
		var out []int
		for _, p := range ps {
			out = append(out, p.PID)
		}
		slices.Sort(out)
		return out
	}
	defer func() {
		KillPIDs(func() []int { return pids(Tree(cmd.Process.Pid)) }, 5*time.Second)
		cmd.Process.Kill()
		cmd.Wait()
	}()
	var tree []int
	for deadline := time.Now().Add(10 * time.Second); len(tree) < 3 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		tree = pids(Tree(cmd.Process.Pid))
	}
	assert.Assert(t, is.Len(tree, 3), "sh's tree: %v", tree)
	procs, err := Scan()
	assert.NilError(t, err)
	assert.DeepEqual(t, tree, pids(Descendants(procs, cmd.Process.Pid)))
	assert.Check(t, is.Len(Tree(1<<30), 0), "no such process: an empty tree")
}

// TestKillProcChecksWhoHasThePid: KillProc kills the process it was
// given, and not the one that has its pid when the start time differs
// (as a process that took a reaped pid would); nor one that has ended.
func TestKillProcChecksWhoHasThePid(t *testing.T) {
	cmd := exec.Command("/bin/sleep", "60")
	assert.NilError(t, cmd.Start())
	defer cmd.Wait()
	defer cmd.Process.Kill()
	p, err := Stat(cmd.Process.Pid)
	assert.NilError(t, err)
	var k Killer
	stale := p
	stale.Start--
	assert.Check(t, !k.KillProc(stale), "a process that started at another time is another process")
	time.Sleep(20 * time.Millisecond)
	now, err := Stat(p.PID)
	assert.NilError(t, err)
	assert.Check(t, now.Alive(), "the pid's present owner survives")

	assert.Check(t, k.KillProc(p))
	assert.Check(t, k.Wait(5*time.Second))
	assert.Check(t, !k.KillProc(p), "an ended process is not signalled")
}

// TestNewcomersOnlyReadsProcessesStartedSince: a process with the
// argument that was there before is not found; one started after is,
// also when it took the argument by an exec after it was first listed.
func TestNewcomersOnlyReadsProcessesStartedSince(t *testing.T) {
	arg := Tag()
	// Each shell waits on its stdin with a builtin, so that it forks
	// nothing: a child forked after NewNewcomers would carry the argument
	// until its exec, and be a newcomer.
	hold := func(script string, args ...string) (*exec.Cmd, io.Writer) {
		cmd := exec.Command("/bin/sh", append([]string{"-c", script}, args...)...)
		in, err := cmd.StdinPipe()
		assert.NilError(t, err)
		assert.NilError(t, cmd.Start())
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, in
	}
	before, _ := hold("read _", arg)
	n := NewNewcomers()
	found := func() []int {
		var out []int
		for _, p := range n.WithArg(arg) {
			out = append(out, p.PID)
		}
		slices.Sort(out)
		return out
	}
	assert.Check(t, is.Len(found(), 0), "a process from before is not a newcomer")

	later, resume := hold("read _; exec /bin/sh -c 'read _' " + arg)
	assert.Check(t, is.Len(found(), 0), "the shell has not execed yet")
	_, err := resume.Write([]byte("\n"))
	assert.NilError(t, err)
	after, _ := hold("read _", arg)

	want := []int{later.Process.Pid, after.Process.Pid}
	slices.Sort(want)
	var got []int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if got = found(); slices.Equal(got, want) {
			break
		}
	}
	assert.DeepEqual(t, got, want)
	assert.Check(t, !slices.Contains(got, before.Process.Pid))
}
