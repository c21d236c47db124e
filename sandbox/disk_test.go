package sandbox

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/skip"
)

// TestSessionStore: at L6 a root caller's session directory is a
// filesystem of its own, of the quota's bytes and the policy's inodes,
// owned by the program's identity; Close unmounts and removes it.
func TestSessionStore(t *testing.T) {
	skip.If(t, !HostRoot(), "the session's filesystem is mounted on the host: root only")
	root := testRoot(t)
	p := MustPreset(6)
	p.Hardened.SessionInodes = 321
	s, err := NewSession(Options{Policy: p, Root: root, Quota: 3 << 20})
	assert.NilError(t, err)
	dir := s.Dir()
	assert.Check(t, isSessionStore(dir))
	var st unix.Statfs_t
	assert.NilError(t, unix.Statfs(dir, &st))
	assert.Check(t, is.Equal(int64(st.Blocks)*st.Bsize, int64(3<<20)))
	assert.Check(t, is.Equal(st.Files, uint64(321)))
	info, err := os.Stat(dir)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(info.Mode().Perm(), os.FileMode(0o700)))
	assert.NilError(t, s.Close())
	_, err = os.Lstat(dir)
	assert.Check(t, errors.Is(err, os.ErrNotExist), "Close left %s: %v", dir, err)
	assert.Check(t, !isSessionStore(dir))
}

// TestDiskCappedInRun: one run cannot write past the quota or the inode
// cap; it ends with the disk reason, and the next run goes on once
// files are deleted. Without the cap (L5) the same run writes past the
// quota.
func TestDiskCappedInRun(t *testing.T) {
	skip.If(t, !HostRoot(), "the session's filesystem is mounted on the host: root only")
	root := testRoot(t)
	p := MustPreset(6)
	p.Hardened.SessionInodes = 200
	p.Limits.Wall, p.Watchdog = 20*time.Second, 20*time.Second // the disk, not the clock, is under test
	s, err := NewSession(Options{Policy: p, Root: root, Quota: 4 << 20})
	assert.NilError(t, err)
	defer func() { assert.Check(t, s.Close()) }()
	run := func(src string) *Result {
		res, err := s.Run(context.Background(), Command{Path: python, Args: []string{"-c", src}})
		assert.NilError(t, err)
		return res
	}
	res := run("for i in range(8):\n    open('big%d' % i, 'wb').write(b'x' * (1 << 20))")
	assert.Check(t, is.Equal(res.Reason, ReasonDisk), "%s %s", res.Reason, res.Stderr)
	assert.Check(t, is.Contains(res.Message, "the session directory is full"))
	used, err := diskUsage(s.Dir())
	assert.NilError(t, err)
	assert.Check(t, used <= 4<<20, "the run wrote %d bytes, past the quota", used)

	res = run("import os\nfor f in os.listdir('.'):\n    os.remove(f)\nfor i in range(1000):\n    open('e%d' % i, 'w').close()")
	assert.Check(t, is.Equal(res.Reason, ReasonDisk), "%s %s", res.Reason, res.Stderr)
	entries, err := os.ReadDir(s.Dir())
	assert.NilError(t, err)
	assert.Check(t, len(entries) < 200, "%d files past an inode cap of 200", len(entries))

	res = run("import os\nfor f in os.listdir('.'):\n    os.remove(f)\nopen('small', 'w').write('ok')")
	assert.Check(t, is.Equal(res.Reason, ReasonExited), "deleting files makes room again: %s %s", res.Reason, res.Stderr)
	assert.Check(t, is.Equal(res.ExitCode, 0))
}

// TestRunRefusedWithoutStore: a policy that caps the disk inside the run
// refuses a session whose directory has no filesystem of its own (one
// made under a policy without the cap), rather than run it with the
// check before the next run only.
func TestRunRefusedWithoutStore(t *testing.T) {
	skip.If(t, !HostRoot(), "an ordinary user's L6 run is refused for its control group first")
	root := testRoot(t)
	plain, err := NewSession(Options{Policy: MustPreset(5), Root: root})
	assert.NilError(t, err)
	defer func() { assert.Check(t, plain.Close()) }()
	resumed, err := NewSession(Options{Policy: MustPreset(6), Root: root, Dir: plain.Dir()})
	assert.NilError(t, err)
	_, err = resumed.Run(context.Background(), Command{Path: "/bin/true"})
	assert.Check(t, errors.Is(err, ErrUnavailable), "%v", err)
	assert.Check(t, err != nil && strings.Contains(err.Error(), "SessionInodes"), "the refusal gives the way out: %v", err)
}
