package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/skip"
)

// The removal and the measuring of a session's directory, on trees the
// test builds itself. hostile_test.go has the program build them.

// withOpenFiles runs f with the soft RLIMIT_NOFILE at n. It uses a raw
// prlimit64: syscall.Setrlimit would also change what Go gives the
// processes it starts afterwards.
func withOpenFiles(t testing.TB, n uint64, f func()) {
	t.Helper()
	var old unix.Rlimit
	assert.NilError(t, prlimitNofile(nil, &old))
	low := unix.Rlimit{Cur: min(n, old.Max), Max: old.Max}
	assert.NilError(t, prlimitNofile(&low, nil))
	defer func() { assert.Check(t, prlimitNofile(&old, nil)) }()
	f()
}

func prlimitNofile(newLimit, old *unix.Rlimit) error {
	_, _, e := unix.RawSyscall6(unix.SYS_PRLIMIT64, 0, unix.RLIMIT_NOFILE,
		uintptr(unsafe.Pointer(newLimit)), uintptr(unsafe.Pointer(old)), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// mkChain makes depth nested directories called name below dir, with a
// file at the bottom, holding two descriptors at a time.
func mkChain(t testing.TB, dir string, depth int, name string) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	assert.NilError(t, err)
	for i := 0; i < depth; i++ {
		assert.NilError(t, unix.Mkdirat(fd, name, 0o755))
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		assert.NilError(t, err)
		unix.Close(fd)
		fd = next
	}
	f, err := unix.Openat(fd, "bottom", unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	assert.NilError(t, err)
	unix.Close(f)
	unix.Close(fd)
}

// gone fails the test unless path is gone.
func gone(t testing.TB, path string) {
	t.Helper()
	_, err := os.Lstat(path)
	assert.Check(t, errors.Is(err, fs.ErrNotExist), "%s is left: %v", path, err)
}

// hostCanaries makes, outside the tree, a file and a directory that a
// link in the tree points to; check says whether they survived.
func hostCanaries(t testing.TB, root string) (file, dir string, check func()) {
	t.Helper()
	outside := ownedDir(t, root, "outside")
	file, dir = filepath.Join(outside, "canary.txt"), filepath.Join(outside, "canary.d")
	assert.NilError(t, os.WriteFile(file, []byte("host canary"), 0o644))
	assert.NilError(t, os.Mkdir(dir, 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "inside.txt"), []byte("host canary"), 0o644))
	id := HostIdentity()
	for _, p := range []string{file, dir} {
		assert.NilError(t, os.Chown(p, id.UID, id.GID)) // a hard link to it is then allowed
	}
	return file, dir, func() {
		t.Helper()
		for _, p := range []string{file, filepath.Join(dir, "inside.txt")} {
			b, err := os.ReadFile(p)
			assert.Check(t, err)
			assert.Check(t, is.Equal(string(b), "host canary"), "%s changed", p)
		}
		var st unix.Stat_t
		assert.Check(t, unix.Lstat(file, &st))
		assert.Check(t, is.Equal(st.Nlink, uint64(1)), "the tree's hard link to %s is left", file)
	}
}

// TestRemoveTreeHostile: every kind of entry a program can leave goes,
// whatever its mode, and nothing a link points to is touched.
func TestRemoveTreeHostile(t *testing.T) {
	root := testRoot(t)
	file, dir, check := hostCanaries(t, root)
	tree := filepath.Join(root, "tree")
	assert.NilError(t, os.Mkdir(tree, 0o700))
	in := func(p string) string { return filepath.Join(tree, p) }
	for _, d := range []string{"locked/a/b", "sticky/x", "readonly/x", "noexec/x", "\xff\xfe/x"} {
		assert.NilError(t, os.MkdirAll(in(d), 0o755))
		assert.NilError(t, os.WriteFile(in(d+"/f"), []byte("x"), 0o444))
	}
	mkChain(t, tree, 30, strings.Repeat("L", 250)) // a path of 7,500 bytes
	assert.NilError(t, unix.Mkfifo(in("fifo"), 0o600))
	sock, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	assert.NilError(t, err)
	assert.NilError(t, unix.Bind(sock, &unix.SockaddrUnix{Name: in("sock")}))
	unix.Close(sock)
	assert.NilError(t, os.WriteFile(in("caf\xe9"), []byte("x"), 0o644))
	assert.NilError(t, os.Link(in("caf\xe9"), in("locked/a/hard")))
	assert.NilError(t, os.Link(file, in("hostlink")))
	assert.NilError(t, os.Symlink(file, in("to-host-file")))
	assert.NilError(t, os.Symlink(dir, in("locked/to-host-dir")))
	assert.NilError(t, os.Symlink(dir+"/", in("to-host-dir-slash")))
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{{"locked/a/b", 0}, {"locked/a", 0}, {"locked", 0}, {"sticky", 0o777 | os.ModeSticky},
		{"readonly", 0o500}, {"noexec", 0o600}, {".", 0}} {
		assert.NilError(t, os.Chmod(in(c.path), c.mode))
	}

	withOpenFiles(t, 64, func() { assert.NilError(t, removeTree(tree)) })
	gone(t, tree)
	check()
	assert.NilError(t, removeTree(tree), "a tree already gone is no error")
}

// TestRemoveTreeDeep: a chain deeper than the open-file limit and far
// longer than PATH_MAX goes, and so is measured, with a few descriptors.
// Without -short the chain is deeper than this machine's hard limit too.
func TestRemoveTreeDeep(t *testing.T) {
	depth := 3000
	var lim unix.Rlimit
	assert.NilError(t, prlimitNofile(nil, &lim))
	if !testing.Short() {
		depth = int(lim.Max) + 5000
	}
	root := testRoot(t)
	tree := filepath.Join(root, "tree")
	assert.NilError(t, os.Mkdir(tree, 0o700))
	start := time.Now()
	mkChain(t, tree, depth, "d")
	t.Logf("made a chain %d deep (a path of %d bytes) in %v", depth, 2*depth, time.Since(start).Round(time.Millisecond))
	// A locked directory half way down, and the top locked too.
	mid := filepath.Join(append([]string{tree}, strings.Split(strings.Repeat("d/", 100), "/")...)...)
	assert.NilError(t, os.Chmod(mid, 0))
	assert.NilError(t, os.Chmod(tree, 0))

	withOpenFiles(t, 256, func() {
		start = time.Now()
		used, err := diskUsage(tree)
		assert.NilError(t, err)
		t.Logf("measured %d bytes in %v", used, time.Since(start).Round(time.Millisecond))
		assert.Check(t, used >= int64(depth)*512, "%d bytes for %d directories", used, depth)
		var st unix.Stat_t
		assert.NilError(t, unix.Lstat(tree, &st))
		assert.Check(t, is.Equal(st.Mode&0o7777, uint32(0)), "measuring changed the top's mode")
		assert.NilError(t, os.Chmod(tree, 0o700))
		assert.NilError(t, unix.Lstat(mid, &st))
		assert.Check(t, is.Equal(st.Mode&0o7777, uint32(0)), "measuring changed a directory's mode")
		assert.NilError(t, os.Chmod(tree, 0))

		start = time.Now()
		assert.NilError(t, removeTree(tree))
		t.Logf("removed it in %v", time.Since(start).Round(time.Millisecond))
	})
	gone(t, tree)
}

// TestDiskUsageSeesEverything: what a directory's mode hides still counts,
// the mode is left as it was, a file with several links counts once, a
// link to a large host file counts as a link.
func TestDiskUsageSeesEverything(t *testing.T) {
	root := testRoot(t)
	big := filepath.Join(ownedDir(t, root, "outside"), "big")
	assert.NilError(t, os.WriteFile(big, make([]byte, 4<<20), 0o644))
	tree := filepath.Join(root, "tree")
	assert.NilError(t, os.MkdirAll(filepath.Join(tree, "hide/deeper"), 0o700))
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i) // not a hole
	}
	f := filepath.Join(tree, "hide/deeper/mb")
	assert.NilError(t, os.WriteFile(f, data, 0o644))
	for i := 0; i < 3; i++ {
		assert.NilError(t, os.Link(f, filepath.Join(tree, "hide", "link"+string(rune('a'+i)))))
	}
	assert.NilError(t, os.Symlink(big, filepath.Join(tree, "to-big")))
	assert.NilError(t, os.Chmod(filepath.Join(tree, "hide/deeper"), 0))
	assert.NilError(t, os.Chmod(filepath.Join(tree, "hide"), 0o100))

	used, err := diskUsage(tree)
	assert.NilError(t, err)
	assert.Check(t, used >= 1<<20 && used < 2<<20, "used %d: want the 1 MiB file once, and not the host's 4 MiB", used)
	for p, want := range map[string]uint32{"hide": 0o100, "hide/deeper": 0} {
		var st unix.Stat_t
		assert.NilError(t, unix.Lstat(filepath.Join(tree, p), &st)) // root may; a user may pass hide with x
		assert.Check(t, is.Equal(st.Mode&0o7777, want), "%s's mode changed", p)
	}
	assert.NilError(t, removeTree(tree))
}

// TestRemoveTreeStopsAtMounts: a mount inside the tree (which the program
// cannot make on the host, but the host could) is not crossed: the files
// beneath it survive, the rest goes, and the error names the mount.
func TestRemoveTreeStopsAtMounts(t *testing.T) {
	skip.If(t, !HostRoot(), "mounting needs root")
	root := testRoot(t)
	file, dir, check := hostCanaries(t, root)
	tree := filepath.Join(root, "tree")
	for _, d := range []string{"a/mnt", "b"} {
		assert.NilError(t, os.MkdirAll(filepath.Join(tree, d), 0o700))
	}
	assert.NilError(t, os.WriteFile(filepath.Join(tree, "b/file-mnt"), nil, 0o600))
	assert.NilError(t, os.WriteFile(filepath.Join(tree, "c"), nil, 0o600))

	done := make(chan struct{})
	go func() {
		defer close(done)
		// Never unlocked: the thread, with a mount namespace of its own,
		// ends with the goroutine, and its mounts with it.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			t.Errorf("unshare: %v", err)
			return
		}
		assert.Check(t, unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""))
		assert.Check(t, unix.Mount(dir, filepath.Join(tree, "a/mnt"), "", unix.MS_BIND, ""))
		assert.Check(t, unix.Mount(file, filepath.Join(tree, "b/file-mnt"), "", unix.MS_BIND, ""))
		err := removeTree(tree)
		assert.Check(t, is.ErrorContains(err, "a/mnt: a mount point"))
		assert.Check(t, is.ErrorContains(err, "2 entries left"))
		_, err = os.Stat(filepath.Join(tree, "a/mnt/inside.txt"))
		assert.Check(t, err, "the removal crossed a mount")
		gone(t, filepath.Join(tree, "c"))
	}()
	<-done
	check()
	assert.NilError(t, removeTree(tree))
	gone(t, tree)
}

// TestRemoveTreeNamesImmutableFiles: a file flagged immutable (which only
// the host's administrator can do) is left, and the error says what to do.
func TestRemoveTreeNamesImmutableFiles(t *testing.T) {
	root := testRoot(t)
	tree := filepath.Join(root, "tree")
	assert.NilError(t, os.Mkdir(tree, 0o700))
	f := filepath.Join(tree, "frozen")
	assert.NilError(t, os.WriteFile(f, nil, 0o600))
	fd, err := unix.Open(f, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	assert.NilError(t, err)
	defer unix.Close(fd)
	const fsImmutable = 0x10
	err = unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, fsImmutable)
	skip.If(t, err != nil, "cannot flag a file immutable here (%v): that needs CAP_LINUX_IMMUTABLE", err)
	err = removeTree(tree)
	assert.Check(t, is.ErrorContains(err, "frozen: operation not permitted: flagged immutable"))
	assert.Check(t, is.ErrorContains(err, "CAP_LINUX_IMMUTABLE"))
	assert.NilError(t, unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, 0))
	assert.NilError(t, removeTree(tree))
	gone(t, tree)
}
