package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"sandboxlab/sandbox/cgroup"
	"sandboxlab/sandbox/procfs"
)

const python = "/usr/bin/python3"

// testRoot makes a directory the program's host identity can pass
// through (0711), for session directories and fixtures, and checks at the
// end of the test that every session made in it was removed.
func testRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sandboxlab-test-")
	assert.NilError(t, err)
	assert.NilError(t, os.Chmod(dir, 0o711))
	t.Cleanup(func() {
		left, _ := filepath.Glob(filepath.Join(dir, sessionPrefix+"*"))
		if len(left) > 0 {
			t.Errorf("session directories left behind: %v", left)
		}
		os.RemoveAll(dir)
	})
	return dir
}

// ownedDir makes a directory below root that belongs to the program's
// host identity, as the user's own files belong to the user.
func ownedDir(t testing.TB, root, name string) string {
	t.Helper()
	dir := filepath.Join(root, name)
	assert.NilError(t, os.MkdirAll(dir, 0o755))
	id := HostIdentity()
	assert.NilError(t, os.Chown(dir, id.UID, id.GID))
	return dir
}

// token returns a random string to tag a program's command line (and so
// find its processes on the host) or to serve as a canary secret.
func token(t testing.TB) string {
	b := make([]byte, 8)
	_, err := rand.Read(b)
	assert.NilError(t, err)
	return "tok" + hex.EncodeToString(b)
}

// runPy runs Python source under p in a fresh session below root; extra
// arguments follow the source (sys.argv[1:]).
func runPy(t testing.TB, root string, p Policy, cmd Command, src string, args ...string) *Result {
	t.Helper()
	s, err := NewSession(Options{Policy: p, Root: root})
	assert.NilError(t, err)
	defer func() { assert.Check(t, s.Close()) }()
	cmd.Path = python
	cmd.Args = append([]string{"-c", src}, args...)
	res, err := s.Run(context.Background(), cmd)
	assert.NilError(t, err)
	return res
}

// alive returns the live processes tagged with tok.
func alive(tok string) []procfs.Proc { return procfs.WithArg(tok) }

// killTagged kills whatever is left of the processes tagged with tok, so
// that no test leaves anything running, and returns how many there were.
func killTagged(tok string) int { return procfs.KillWithArg(tok, 10*time.Second) }

// levelsHere returns the levels from first up that this host can provide.
// A level the host cannot provide (L6 without a usable control group, as
// for an ordinary user without a delegated cgroup v2 subtree) must be
// refused, not run weaker: that is asserted here, and the level left out.
func levelsHere(t testing.TB, first int) []int {
	t.Helper()
	var levels []int
	for n := first; n < Levels; n++ {
		p := MustPreset(n)
		if p.Hardened.Cgroup.on() {
			if err := cgroupProbe(p.Hardened.Cgroup); err != nil {
				assert.Check(t, !HostRoot(), "root must be able to make control groups: %v", err)
				s, err := NewSession(Options{Policy: p, Root: testRoot(t)})
				assert.NilError(t, err)
				_, err = s.Run(context.Background(), Command{Path: "/bin/true"})
				assert.Check(t, errors.Is(err, ErrUnavailable), "L%d without control groups: %v", n, err)
				assert.Check(t, errors.Is(err, cgroup.ErrUnavailable), "the cause is kept: %v", err)
				assert.Check(t, err != nil && strings.Contains(err.Error(), "up to L5 need no control group"), "the refusal gives the way out: %v", err)
				assert.Check(t, s.Close())
				t.Logf("L%d left out: %v", n, err)
				continue
			}
		}
		levels = append(levels, n)
	}
	return levels
}

// cgroupProbe makes and removes a control group as a run of c would.
func cgroupProbe(c Cgroup) error {
	g, err := cgroup.New(cgroup.Config{Memory: c.Memory, Pids: int64(c.Pids), CPUWeight: c.CPUWeight})
	if err != nil {
		return err
	}
	return g.Close()
}
