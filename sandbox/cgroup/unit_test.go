package cgroup

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestUnavailableFailsClosed(t *testing.T) {
	empty := t.TempDir()
	onlyMemory := t.TempDir()
	assert.NilError(t, os.Mkdir(filepath.Join(onlyMemory, "memory"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(onlyMemory, "memory", "cgroup.procs"), nil, 0o644))
	for _, tc := range []struct {
		name string
		m    Mounts
		why  string
	}{
		{"nothing", Mounts{}, "cgroup v1: no memory hierarchy; cgroup v2: not mounted"},
		{"empty dir", Mounts{
			V1: map[string]string{"memory": filepath.Join(empty, "memory"), "pids": filepath.Join(empty, "pids")},
			V2: empty,
		}, "cannot make groups in " + filepath.Join(empty, "memory")},
		{"no pids", Mounts{V1: map[string]string{"memory": filepath.Join(onlyMemory, "memory")}}, "no pids hierarchy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := New(Config{Memory: 64 << 20, Pids: 16, Mounts: &tc.m})
			assert.Assert(t, g == nil)
			assert.Assert(t, errors.Is(err, ErrUnavailable), "%v", err)
			assert.ErrorContains(t, err, tc.why)
			assert.ErrorContains(t, err, "run as root (cgroup v1 memory and pids hierarchies)")
			assert.ErrorContains(t, err, "delegated cgroup v2 subtree with the memory and pids controllers")
		})
	}
	left, err := os.ReadDir(empty)
	assert.NilError(t, err)
	assert.Check(t, is.Len(left, 0), "nothing made in the empty tree")
}

func TestUnavailableV2WithoutPids(t *testing.T) {
	parent := fakeV2Parent(t, "cpu memory", "")
	_, err := New(Config{Mounts: &Mounts{V2: parent}})
	assert.Assert(t, errors.Is(err, ErrUnavailable), "%v", err)
	assert.ErrorContains(t, err, parent+" offers no pids controller")
}

func TestConfigOutOfRange(t *testing.T) {
	for _, c := range []Config{{Memory: -1}, {Pids: -1}, {CPUWeight: 10001}, {CPUWeight: -5}} {
		c.Mounts = &Mounts{}
		_, err := New(c)
		assert.ErrorContains(t, err, "out of range")
		assert.Check(t, !errors.Is(err, ErrUnavailable))
	}
}

// fakeTree stands in for the kernel: after New makes a directory, it fills
// it with the interface files the kernel would show (files maps name to
// content), and directories are removed with their files.
func fakeTree(t *testing.T, files map[string]string) {
	t.Helper()
	oldMkdir, oldRemove := afterMkdir, removeDir
	afterMkdir = func(dir string) {
		for name, content := range files {
			assert.NilError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
		}
	}
	removeDir = os.RemoveAll
	t.Cleanup(func() { afterMkdir, removeDir = oldMkdir, oldRemove })
}

func fakeV2Parent(t *testing.T, controllers, subtree string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"cgroup.controllers":     controllers + "\n",
		"cgroup.subtree_control": subtree + "\n",
		"cgroup.procs":           "",
	} {
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	return dir
}

func readString(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	assert.NilError(t, err)
	return strings.TrimSpace(string(b))
}

// The v2 logic against a fake tree: this machine's unified hierarchy has
// no memory or pids controller (both are bound to v1), so a real v2 run
// with limits cannot happen here. TestV2Real covers the real kernel's
// side (leaf, no-internal-process rule, CLONE_INTO_CGROUP, cgroup.kill).
func TestV2FakeTree(t *testing.T) {
	fakeTree(t, map[string]string{
		"cgroup.procs":    "",
		"cgroup.kill":     "",
		"memory.max":      "max",
		"memory.swap.max": "max",
		"memory.events":   "low 0\nhigh 0\nmax 9\noom 3\noom_kill 2\noom_group_kill 0\n",
		"memory.peak":     "67100000",
		"pids.max":        "max",
		"pids.current":    "0",
		"pids.peak":       "16",
		"pids.events":     "max 24\n",
		"cpu.weight":      "100",
	})

	t.Run("limits", func(t *testing.T) {
		parent := fakeV2Parent(t, "memory pids", "")
		g, err := New(Config{Memory: 64 << 20, Pids: 16, Mounts: &Mounts{V2: parent}})
		assert.NilError(t, err)
		defer g.Close()
		assert.Equal(t, g.Version(), 2)
		assert.Equal(t, readString(t, parent, "cgroup.subtree_control"), "+memory +pids")
		leaf := filepath.Join(parent, g.Name())
		assert.DeepEqual(t, g.Dirs(), []string{leaf})
		assert.Equal(t, readString(t, leaf, "memory.max"), "67108864")
		assert.Equal(t, readString(t, leaf, "memory.swap.max"), "0")
		assert.Equal(t, readString(t, leaf, "pids.max"), "16")
		_, err = g.CPUWeight()
		assert.ErrorContains(t, err, "no cpu controller")

		s, err := g.Stats()
		assert.NilError(t, err)
		assert.DeepEqual(t, s, Stats{OOMKills: 2, MemoryPeak: 67100000, PidsPeak: 16, PidsLimitHits: 24})
		oom, err := g.OOMKilled()
		assert.NilError(t, err)
		assert.Check(t, oom)

		fd, err := g.FD()
		assert.NilError(t, err)
		assert.Check(t, fd >= 0)
		assert.NilError(t, g.Add(1234))
		assert.Equal(t, readString(t, leaf, "cgroup.procs"), "1234")
		// The fake process leaves; a real one would be killed by Close.
		assert.NilError(t, os.WriteFile(filepath.Join(leaf, "cgroup.procs"), nil, 0o644))
		assert.NilError(t, g.Close())
	})

	t.Run("cpu", func(t *testing.T) {
		// memory and pids already handed down: only cpu is written.
		parent := fakeV2Parent(t, "cpu memory pids", "memory pids")
		g, err := New(Config{CPUWeight: 250, Mounts: &Mounts{V2: parent}})
		assert.NilError(t, err)
		defer g.Close()
		assert.Equal(t, readString(t, parent, "cgroup.subtree_control"), "+cpu")
		w, err := g.CPUWeight()
		assert.NilError(t, err)
		assert.Equal(t, w, 250)
		assert.NilError(t, g.SetCPUWeight(40))
		assert.Equal(t, readString(t, filepath.Join(parent, g.Name()), "cpu.weight"), "40")
		assert.ErrorContains(t, g.SetCPUWeight(0), "out of [1, 10000]")
	})

	t.Run("close", func(t *testing.T) {
		parent := fakeV2Parent(t, "memory pids", "memory pids")
		g, err := New(Config{Mounts: &Mounts{V2: parent}})
		assert.NilError(t, err)
		leaf := filepath.Join(parent, g.Name())
		assert.NilError(t, g.Close())
		_, err = os.Stat(leaf)
		assert.Check(t, errors.Is(err, os.ErrNotExist))
		assert.NilError(t, g.Close(), "Close is idempotent")
		_, err = g.FD()
		assert.ErrorContains(t, err, "closed")
		assert.ErrorContains(t, g.Add(1), "closed")
	})
}

// The v1 logic where this machine's kernel cannot show it: no swap
// accounting (no memsw file) and a kernel older than 4.13 (no oom_kill
// count, which must fail rather than read as "no OOM").
func TestV1FakeTreeOldKernel(t *testing.T) {
	fakeTree(t, map[string]string{
		"cgroup.procs":          "",
		"memory.limit_in_bytes": "9223372036854771712",
		"memory.swappiness":     "60",
		"memory.oom_control":    "oom_kill_disable 0\nunder_oom 0\n",
		"pids.max":              "max",
		"pids.current":          "0",
		"cpu.shares":            "1024",
	})
	root := t.TempDir()
	m := Mounts{V1: map[string]string{}}
	for _, ctl := range []string{"memory", "pids", "cpu"} {
		dir := filepath.Join(root, ctl, "caller")
		assert.NilError(t, os.MkdirAll(dir, 0o755))
		assert.NilError(t, os.WriteFile(filepath.Join(dir, "cgroup.procs"), nil, 0o644))
		m.V1[ctl] = dir
	}
	g, err := New(Config{Memory: 64 << 20, CPUWeight: 50, Mounts: &m})
	assert.NilError(t, err)
	assert.Equal(t, g.Version(), 1)
	assert.Check(t, is.Len(g.Dirs(), 3))
	mem := filepath.Join(m.V1["memory"], g.Name())
	assert.Equal(t, readString(t, mem, "memory.limit_in_bytes"), "67108864")
	assert.Equal(t, readString(t, mem, "memory.swappiness"), "0")
	assert.Equal(t, readString(t, filepath.Join(m.V1["cpu"], g.Name()), "cpu.shares"), "512")
	_, err = g.Stats()
	assert.Assert(t, errors.Is(err, errNoKey), "%v", err)
	_, err = g.FD()
	assert.ErrorContains(t, err, "use Add")
	assert.NilError(t, g.Close())
	for _, d := range g.Dirs() {
		t.Errorf("left behind: %s", d)
	}
	for _, ctl := range []string{"memory", "pids", "cpu"} {
		_, err := os.Stat(filepath.Join(m.V1[ctl], g.Name()))
		assert.Check(t, errors.Is(err, os.ErrNotExist))
	}
}
