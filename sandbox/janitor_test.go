package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/sandbox/procfs"
)

// TestCollectGarbage: the janitor removes a session whose owner has
// ended, and nothing else: not a live owner's, not a kept one, not a
// directory without a record of this user's, not one whose record names
// a PID that now belongs to another process.
func TestCollectGarbage(t *testing.T) {
	root := testRoot(t)
	mk := func(rec string) string {
		t.Helper()
		dir, err := os.MkdirTemp(root, sessionPrefix)
		assert.NilError(t, err)
		id := HostIdentity()
		assert.NilError(t, os.Chown(dir, id.UID, id.GID))
		if rec != "" {
			assert.NilError(t, os.WriteFile(dir+ownerSuffix, []byte(rec), 0o644))
		}
		t.Cleanup(func() { os.RemoveAll(dir); os.Remove(dir + ownerSuffix) })
		return dir
	}
	// A process that has ended, and its start time.
	dead := exec.Command("/bin/true")
	assert.NilError(t, dead.Start())
	p, err := procfs.Stat(dead.Process.Pid)
	assert.NilError(t, err)
	assert.NilError(t, dead.Wait())
	me, err := procfs.Stat(os.Getpid())
	assert.NilError(t, err)

	gone := mk(fmt.Sprintf("%d %d\n", p.PID, p.Start))
	alive := mk(fmt.Sprintf("%d %d\n", me.PID, me.Start))
	reused := mk(fmt.Sprintf("%d %d\n", me.PID, me.Start+1)) // another process had this PID
	kept := mk("kept\n")
	foreign := mk("") // no record: not made by this package
	bogus := mk("rm -rf /\n")

	removed, err := CollectGarbage(root)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(slices.Sorted(slices.Values(removed)), slices.Sorted(slices.Values([]string{gone, reused}))))
	for _, dir := range []string{alive, kept, foreign, bogus} {
		_, err := os.Stat(dir)
		assert.Check(t, err, "%s was removed", filepath.Base(dir))
	}
	for _, dir := range []string{gone, reused} {
		_, err := os.Lstat(dir + ownerSuffix)
		assert.Check(t, os.IsNotExist(err), "the owner record of %s is left", filepath.Base(dir))
	}
}

// TestSessionRecordsItsOwner: a session's owner record names this
// process until Close removes it with the directory; a kept session's
// says so.
func TestSessionRecordsItsOwner(t *testing.T) {
	root := testRoot(t)
	s, err := NewSession(Options{Policy: MustPreset(0), Root: root})
	assert.NilError(t, err)
	gone, err := ownerGone(s.Dir())
	assert.NilError(t, err)
	assert.Check(t, !gone)
	assert.NilError(t, s.Close())
	_, err = os.Lstat(s.Dir() + ownerSuffix)
	assert.Check(t, os.IsNotExist(err))

	k, err := NewSession(Options{Policy: MustPreset(0), Root: root, Keep: true})
	assert.NilError(t, err)
	b, err := os.ReadFile(k.Dir() + ownerSuffix)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(string(b), "kept\n"))
	assert.NilError(t, k.Close())
}
