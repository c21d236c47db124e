package cgroup

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/skip"

	"sandboxlab/sandbox/procfs"
)

// goneOwner is the procfs.Owner of a process that has ended: its pid (not reused
// so soon) and a start time.
func goneOwner(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("/bin/true")
	assert.NilError(t, cmd.Run())
	return strconv.Itoa(cmd.Process.Pid) + "-12345"
}

// TestSweepStale: only the empty groups of owners that are gone are
// removed; a live owner's, one still holding a process, one whose pid was
// reused by a later process, and names that are not a run's are decided
// as the doc comment says.
func TestSweepStale(t *testing.T) {
	fakeTree(t, nil)
	parent := t.TempDir()
	me, err := procfs.Stat(os.Getpid())
	assert.NilError(t, err)
	group := func(name, procs string) string {
		dir := filepath.Join(parent, name)
		assert.NilError(t, os.Mkdir(dir, 0o755))
		assert.NilError(t, os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(procs), 0o644))
		return dir
	}
	gone := goneOwner(t)
	cases := []struct {
		dir  string
		kept bool
	}{
		{group(RunPrefix+gone+"-aa", ""), false},
		{group(RunPrefix+procfs.Owner()+"-bb", ""), true},
		{group(RunPrefix+gone+"-cc", "4242\n"), true},
		{group(RunPrefix+strconv.Itoa(me.PID)+"-"+strconv.FormatUint(me.Start+1, 10)+"-dd", ""), false},
		{group(RunPrefix+"garbage", ""), true},
		{group("other-"+gone+"-ee", ""), true},
	}
	sweep(parent, RunPrefix)
	for _, c := range cases {
		_, err := os.Stat(c.dir)
		assert.Check(t, c.kept == (err == nil), "%s: kept %v, want %v", filepath.Base(c.dir), err == nil, c.kept)
	}
}

// TestSweepStaleKernel: a group a killed caller left in the kernel's
// pids hierarchy is removed by the next process's sweep.
func TestSweepStaleKernel(t *testing.T) {
	skip.If(t, os.Geteuid() != 0, "needs root for the cgroup v1 pids hierarchy")
	m, err := Detect()
	assert.NilError(t, err)
	parent, ok := m.V1["pids"]
	skip.If(t, !ok || v1Unusable(m.V1) != "", "no usable cgroup v1 hierarchies")
	dir := filepath.Join(parent, RunPrefix+goneOwner(t)+"-ff")
	assert.NilError(t, os.Mkdir(dir, 0o755))
	t.Cleanup(func() { removeDir(dir) })
	sweep(parent, RunPrefix)
	_, err = os.Stat(dir)
	assert.Check(t, errors.Is(err, os.ErrNotExist), "the stale group is still there: %v", err)
}

// TestSweepStaleNested: a jail of an ended owner that holds the run group
// of an ended owner (what a harness killed mid-probe leaves) is removed
// with it; one that holds the group of a live owner is kept, and so is
// that group.
func TestSweepStaleNested(t *testing.T) {
	skip.If(t, os.Geteuid() != 0, "needs root for the cgroup v1 pids hierarchy")
	m, err := Detect()
	assert.NilError(t, err)
	parent, ok := m.V1["pids"]
	skip.If(t, !ok || v1Unusable(m.V1) != "", "no usable cgroup v1 hierarchies")
	const jail = "sandboxlab-test-jail-"
	gone := goneOwner(t)
	mkdir := func(dir string) string {
		assert.NilError(t, os.Mkdir(dir, 0o755))
		t.Cleanup(func() { removeDir(dir) })
		return dir
	}
	stale := mkdir(filepath.Join(parent, jail+gone+"-1"))
	staleRun := filepath.Join(stale, RunPrefix+gone+"-hh")
	assert.NilError(t, os.Mkdir(staleRun, 0o755))
	t.Cleanup(func() { removeDir(staleRun) })
	kept := filepath.Join(parent, jail+gone+"-2")
	keptRun := filepath.Join(kept, RunPrefix+procfs.Owner()+"-ii")
	assert.NilError(t, os.Mkdir(kept, 0o755))
	assert.NilError(t, os.Mkdir(keptRun, 0o755))
	t.Cleanup(func() { removeDir(keptRun); removeDir(kept) })
	sweep(parent, jail)
	_, err = os.Stat(stale)
	assert.Check(t, errors.Is(err, os.ErrNotExist), "the stale jail is still there: %v", err)
	_, err = os.Stat(keptRun)
	assert.Check(t, err, "a live owner's run group was removed")
}
