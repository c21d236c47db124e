package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestResumeRepairsTheMode: resuming checks what matters (a directory
// owned by the program's identity, not a link) and gives the directory
// back its mode instead of refusing it.
func TestResumeRepairsTheMode(t *testing.T) {
	root := testRoot(t)
	s, err := NewSession(Options{Policy: MustPreset(2), Root: root})
	assert.NilError(t, err)
	defer func() { assert.Check(t, s.Close()) }()
	for _, mode := range []os.FileMode{0, 0o500, 0o777 | os.ModeSticky, 0o755 | os.ModeSetgid} {
		assert.NilError(t, os.Chmod(s.Dir(), mode))
		again, err := NewSession(Options{Policy: MustPreset(2), Dir: s.Dir()})
		assert.NilError(t, err, "mode %v", mode)
		assert.Check(t, again != nil)
		st, err := os.Lstat(s.Dir())
		assert.NilError(t, err)
		assert.Check(t, is.Equal(st.Mode(), os.ModeDir|0o700), "after %v", mode)
	}
	link := filepath.Join(root, sessionPrefix+"link")
	assert.NilError(t, os.Symlink(s.Dir(), link))
	_, err = NewSession(Options{Policy: MustPreset(2), Dir: link})
	assert.Check(t, is.ErrorContains(err, "found a symbolic link"))
	assert.NilError(t, os.Remove(link))
	if HostRoot() {
		foreign, err := os.MkdirTemp(root, sessionPrefix)
		assert.NilError(t, err)
		defer os.Remove(foreign)
		_, err = NewSession(Options{Policy: MustPreset(2), Dir: foreign})
		assert.Check(t, is.ErrorContains(err, "not owned by uid"))
	}
}
