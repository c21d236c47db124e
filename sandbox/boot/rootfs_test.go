package boot

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestMoveCloneOfAReplacedFile: a host file replaced after the root
// cloned it, as useradd renames a new /etc/group into place, is cloned
// again and bound as it is now; the first clone, a deleted file, is one
// the kernel will not mount (a concurrent useradd failed an L6 run with
// "binding /etc/group into the new root: no such file or directory").
func TestMoveCloneOfAReplacedFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("cloning a mount here needs root in the host's namespaces; an ordinary user's runs clone in their own")
	}
	dir := t.TempDir()
	src, at := filepath.Join(dir, "group"), filepath.Join(dir, "mount-point")
	assert.NilError(t, os.WriteFile(src, []byte("old"), 0o644))
	assert.NilError(t, os.WriteFile(at, nil, 0o644))
	type outcome struct {
		read string
		err  error
	}
	done := make(chan outcome, 1)
	go func() {
		// Never unlocked: the thread leaves the host's mount namespace,
		// and ends with the goroutine, taking the mount with it.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			done <- outcome{err: err}
			return
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			done <- outcome{err: err}
			return
		}
		b, err := cloneSource(src, true)
		if err != nil {
			done <- outcome{err: err}
			return
		}
		defer unix.Close(b.fd)
		if err := os.WriteFile(src+".new", []byte("new"), 0o644); err != nil {
			done <- outcome{err: err}
			return
		}
		if err := os.Rename(src+".new", src); err != nil {
			done <- outcome{err: err}
			return
		}
		if err := moveClone(b, at); err != nil {
			done <- outcome{err: err}
			return
		}
		read, err := os.ReadFile(at)
		done <- outcome{read: string(read), err: err}
	}()
	got := <-done
	assert.NilError(t, got.err)
	assert.Check(t, is.Equal(got.read, "new"))
}

// TestInsideSession: a path in the session moves with it; any other,
// a sibling with the session's name as its prefix included, stays.
func TestInsideSession(t *testing.T) {
	for _, c := range []struct{ path, at, want string }{
		{"/tmp/s1", "/session", "/session"},
		{"/tmp/s1/bin/x", "/session", "/session/bin/x"},
		{"/tmp/s10/x", "/session", "/tmp/s10/x"},
		{"/usr/bin/python3", "/session", "/usr/bin/python3"},
		{"/tmp/s1/x", "", "/tmp/s1/x"},
	} {
		if got := InsideSession(c.path, "/tmp/s1", c.at); got != c.want {
			t.Errorf("InsideSession(%q, /tmp/s1, %q) = %q, want %q", c.path, c.at, got, c.want)
		}
	}
}
