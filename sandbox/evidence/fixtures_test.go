package evidence

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/sandbox/procfs"
)

// TestFixtureDirSweepsOrphans: a fixture directory is named for its
// process, and making one first removes what an ended process left under
// the same prefix (as a harness killed with SIGKILL does), while a
// running process's directory, another prefix's and a name of the old
// kind stay.
func TestFixtureDirSweepsOrphans(t *testing.T) {
	base := t.TempDir()
	const prefix = "sandboxlab-sweeptest-"
	// An owner that has ended: a process started, read and waited for.
	cmd := exec.Command("sleep", "10")
	assert.NilError(t, cmd.Start())
	p, err := procfs.Stat(cmd.Process.Pid)
	assert.NilError(t, err)
	cmd.Process.Kill()
	cmd.Wait()
	orphan := filepath.Join(base, fmt.Sprintf("%s%d-%d-abc", prefix, p.PID, p.Start))
	assert.NilError(t, os.MkdirAll(filepath.Join(orphan, "home", "locked"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(orphan, "home", "locked", "key"), []byte("x"), 0o600))
	live := filepath.Join(base, prefix+procfs.Owner()+"-live")
	old := filepath.Join(base, prefix+"123456789")
	other := filepath.Join(base, fmt.Sprintf("sandboxlab-other-%d-%d-abc", p.PID, p.Start))
	for _, d := range []string{live, old, other} {
		assert.NilError(t, os.Mkdir(d, 0o700))
	}

	dir, err := NewFixtureDir(base, prefix)
	assert.NilError(t, err)
	assert.Check(t, strings.HasPrefix(filepath.Base(dir), prefix+procfs.Owner()+"-"), dir)
	st, err := os.Stat(dir)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(st.Mode().Perm(), os.FileMode(0o711)))
	_, err = os.Stat(orphan)
	assert.Check(t, os.IsNotExist(err), "the ended process's directory is left: %v", err)
	for _, d := range []string{live, old, other} {
		_, err := os.Stat(d)
		assert.Check(t, err, "%s was removed", d)
	}
	assert.NilError(t, RemoveFixtureDir(dir))
	_, err = os.Stat(dir)
	assert.Check(t, os.IsNotExist(err))
}
