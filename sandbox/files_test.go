package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// fileFixture is a session whose program has left things behind, next to
// a host secret outside the session that nothing may hand back.
type fileFixture struct {
	s       *Session
	outside string // a directory outside the session
	secret  string // content of outside/secret.txt
}

func newFileFixture(t *testing.T, level int, quota int64) *fileFixture {
	t.Helper()
	root := testRoot(t)
	f := &fileFixture{outside: filepath.Join(root, "outside"), secret: token(t)}
	assert.NilError(t, os.Mkdir(f.outside, 0o755))
	// The host's own secret: the program's identity cannot read it, only
	// the file API (running with host privileges) could hand it back.
	assert.NilError(t, os.WriteFile(filepath.Join(f.outside, "secret.txt"), []byte(f.secret), 0o600))
	s, err := NewSession(Options{Policy: MustPreset(level), Root: root, Quota: quota})
	assert.NilError(t, err)
	t.Cleanup(func() { assert.Check(t, s.Close()) })
	f.s = s
	return f
}

// program runs Python source in the session and fails the test unless it
// exits 0.
func (f *fileFixture) program(t *testing.T, src string, args ...string) *Result {
	t.Helper()
	res, err := f.s.Run(context.Background(), Command{Path: python, Args: append([]string{"-c", src}, args...)})
	assert.NilError(t, err)
	assert.Assert(t, res.ExitCode == 0 || res.Reason == ReasonRefused, "program failed: %s %s", res.Reason, res.Stderr)
	return res
}

func TestFileAPIRoundTrip(t *testing.T) {
	f := newFileFixture(t, 5, 0)
	assert.NilError(t, f.s.WriteFile("data/in.csv", []byte("a,b\n1,2\n")))
	res := f.program(t, "print(open('data/in.csv').read().count('\\n'))\nopen('data/in.csv', 'a').write('3,4\\n')\nopen('out.txt', 'w').write('done')")
	assert.Check(t, is.Equal(res.Stdout, "2\n"))
	b, err := f.s.ReadFile("out.txt")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(string(b), "done"))
	b, err = f.s.ReadFile("./data/in.csv")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(string(b), "a,b\n1,2\n3,4\n"), "the program could change the file the host wrote")

	files, err := f.s.List()
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(files, []FileInfo{
		{Name: "data", Type: "dir"}, {Name: "data/in.csv", Size: 12, Type: "file"}, {Name: "out.txt", Size: 4, Type: "file"},
	}))
	assert.NilError(t, f.s.Remove("data/in.csv"))
	assert.NilError(t, f.s.Remove("data"))
	_, err = f.s.ReadFile("data/in.csv")
	assert.Check(t, is.ErrorIs(err, fs.ErrNotExist))
}

func TestFileAPIRefusesNames(t *testing.T) {
	f := newFileFixture(t, 5, 0)
	f.program(t, "import os\nos.mkdir('a')\nopen('a/x', 'w').write('inside')")
	cases := []struct {
		name string
		want error
		says string
	}{
		{"", ErrName, "empty"},
		{"a/../../outside/secret.txt", ErrName, "leaves the session directory"},
		{"../outside/secret.txt", ErrName, "leaves the session directory"},
		{"..", ErrName, "leaves the session directory"},
		{"/etc/passwd", ErrName, "is absolute"},
		{filepath.Join(f.outside, "secret.txt"), ErrName, "is absolute"},
		{"a/x\x00.txt", ErrName, "NUL byte"},
		{".", ErrName, "session directory itself"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%q", c.name), func(t *testing.T) {
			b, err := f.s.ReadFile(c.name)
			assert.Check(t, is.ErrorIs(err, c.want))
			assert.Check(t, is.ErrorContains(err, c.says))
			assert.Check(t, !bytes.Contains(b, []byte(f.secret)))
			err = f.s.WriteFile(c.name, []byte("planted"))
			assert.Check(t, is.ErrorIs(err, c.want))
			assert.Check(t, is.ErrorIs(f.s.Remove(c.name), c.want))
		})
	}
	// "a/../x" stays inside: it is a name like any other.
	assert.NilError(t, f.s.WriteFile("a/../x", []byte("ok")))
	b, err := f.s.ReadFile("x")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(string(b), "ok"))
	got, err := os.ReadFile(filepath.Join(f.outside, "secret.txt"))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(string(got), f.secret), "the host secret changed")
}

func TestFileAPIFollowsNoLink(t *testing.T) {
	f := newFileFixture(t, 5, 0)
	secret := filepath.Join(f.outside, "secret.txt")
	// The program plants links pointing out: to the secret, to the
	// directory holding it (used in the middle of a path), and a link that
	// stays inside (refused too: every link is).
	f.program(t, `
import os, sys
os.symlink(sys.argv[1], "report.txt")
os.symlink(sys.argv[2], "d")
open("real.txt", "w").write("real")
os.symlink("real.txt", "inside-link")
`, secret, f.outside)
	for _, name := range []string{"report.txt", "d/secret.txt", "inside-link"} {
		t.Run(name, func(t *testing.T) {
			b, err := f.s.ReadFile(name)
			assert.Check(t, is.ErrorIs(err, ErrLink))
			assert.Check(t, is.ErrorContains(err, "symbolic link"))
			assert.Check(t, !bytes.Contains(b, []byte(f.secret)))
			assert.Check(t, is.ErrorIs(f.s.WriteFile(name, []byte("planted")), ErrLink))
		})
	}
	got, err := os.ReadFile(secret)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(string(got), f.secret), "a write went through a link")
	// Removing a link removes the link, never what it points at.
	assert.NilError(t, f.s.Remove("report.txt"))
	_, err = os.Stat(secret)
	assert.NilError(t, err)
}

// A hard link is a second name for the same file, which may live outside
// the session. protected_hardlinks already keeps the program from linking
// files it could not read and write itself, but the API does not rely on a
// sysctl: it refuses any file with more than one link.
func TestFileAPIRefusesHardLinks(t *testing.T) {
	f := newFileFixture(t, 5, 0)
	mine := filepath.Join(f.outside, "mine.txt") // a host file the program's identity owns
	assert.NilError(t, os.WriteFile(mine, []byte("owned by the program"), 0o600))
	assert.NilError(t, os.Chown(mine, HostIdentity().UID, HostIdentity().GID))
	p := MustPreset(2) // no mount namespace in the way: the link must be made
	s, err := NewSession(Options{Policy: p, Root: filepath.Dir(f.outside)})
	assert.NilError(t, err)
	defer s.Close()
	res, err := s.Run(context.Background(), Command{Path: python, Args: []string{"-c", "import os, sys\nos.link(sys.argv[1], 'hl')", mine}})
	assert.NilError(t, err)
	assert.Assert(t, is.Equal(res.ExitCode, 0), res.Stderr)
	_, err = s.ReadFile("hl")
	assert.Check(t, is.ErrorIs(err, ErrLink))
	assert.Check(t, is.ErrorContains(err, "hard links"))
	assert.Check(t, is.ErrorIs(s.WriteFile("hl", []byte("x")), ErrLink))
}

func TestFileAPIReadsOnlyRegularFiles(t *testing.T) {
	f := newFileFixture(t, 5, 0)
	f.program(t, `
import os, socket
os.mkfifo("pipe")
os.mkdir("dir")
s = socket.socket(socket.AF_UNIX)
s.bind("sock")
`)
	for _, c := range []struct{ name, kind string }{{"pipe", "FIFO"}, {"dir", "directory"}, {"sock", ""}} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := f.s.ReadFile(c.name)
			assert.Check(t, is.ErrorIs(err, ErrNotRegular))
			assert.Check(t, is.ErrorContains(err, c.kind))
			assert.Check(t, time.Since(start) < time.Second, "a FIFO must not hang the host")
			assert.Check(t, is.ErrorIs(f.s.WriteFile(c.name, []byte("x")), ErrNotRegular))
		})
	}
}

func TestFileAPISizeBounds(t *testing.T) {
	f := newFileFixture(t, 2, -1)
	err := f.s.WriteFile("big", make([]byte, MaxFileSize+1))
	assert.Check(t, is.ErrorIs(err, ErrTooLarge))
	f.program(t, "open('big', 'wb').write(b'x' * (9 << 20))")
	_, err = f.s.ReadFile("big")
	assert.Check(t, is.ErrorIs(err, ErrTooLarge))
}

func TestQuotaRefusesAndRecovers(t *testing.T) {
	f := newFileFixture(t, 2, 1<<20)
	f.program(t, "open('fill', 'wb').write(b'x' * (2 << 20))")

	res := f.program(t, "open('ran', 'w').write('ran')")
	assert.Check(t, is.Equal(res.Reason, ReasonRefused))
	assert.Check(t, is.Contains(res.Message, "quota"))
	assert.Check(t, is.Contains(res.Message, "delete files"))
	_, err := os.Stat(filepath.Join(f.s.Dir(), "ran"))
	assert.Check(t, errors.Is(err, fs.ErrNotExist), "a refused run must not run")
	assert.Check(t, is.Equal(res.Files[0].Name, "fill"), "a refused run still lists the files")

	assert.NilError(t, f.s.Remove("fill"))
	res = f.program(t, "open('ran', 'w').write('ran')")
	assert.Check(t, is.Equal(res.Reason, ReasonExited))
	assert.Check(t, is.Equal(f.s.Runs(), 3))
}

func TestFilesPersistAndAreListed(t *testing.T) {
	f := newFileFixture(t, 5, 0)
	f.program(t, "import os\nfor i in range(150):\n    open('f%03d' % i, 'w').write('x' * i)")
	res := f.program(t, "print(len(__import__('os').listdir('.')))")
	assert.Check(t, is.Equal(res.Stdout, "150\n"), "files of the first run are there in the second")
	assert.Check(t, is.Len(res.Files, MaxListed))
	assert.Check(t, res.FilesTruncated)
	assert.Check(t, is.DeepEqual(res.Files[2], FileInfo{Name: "f002", Size: 2, Type: "file"}))
}

func TestCloseRemovesEverything(t *testing.T) {
	root := testRoot(t)
	s, err := NewSession(Options{Policy: MustPreset(5), Root: root})
	assert.NilError(t, err)
	res, err := s.Run(context.Background(), Command{Path: python, Args: []string{"-c", `
import os
os.makedirs("a/b/c")
open("a/b/c/f", "w").write("x")
os.chmod("a/b/c", 0)
os.chmod("a/b", 0o500)
os.mkfifo("pipe")
os.symlink("/etc/passwd", "link")
os.chmod(".", 0o500)
`}})
	assert.NilError(t, err)
	assert.Assert(t, is.Equal(res.ExitCode, 0), res.Stderr)
	dir := s.Dir()
	assert.NilError(t, s.Close())
	_, err = os.Lstat(dir)
	assert.Check(t, errors.Is(err, fs.ErrNotExist), "session directory left behind")
	_, err = s.Run(context.Background(), Command{Path: "/bin/true"})
	assert.Check(t, is.ErrorIs(err, ErrClosed))
	_, err = os.Stat("/etc/passwd")
	assert.NilError(t, err)
}

func TestResumeOnlySessionDirectories(t *testing.T) {
	root := testRoot(t)
	s, err := NewSession(Options{Policy: MustPreset(2), Root: root})
	assert.NilError(t, err)
	defer s.Close()
	again, err := NewSession(Options{Policy: MustPreset(2), Dir: s.Dir()})
	assert.NilError(t, err)
	assert.Check(t, is.Equal(again.Dir(), s.Dir()))

	other := ownedDir(t, root, "not-a-session")
	_, err = NewSession(Options{Policy: MustPreset(2), Dir: other})
	assert.Check(t, is.ErrorContains(err, "not a session directory"))
	_, err = NewSession(Options{Policy: MustPreset(2), Dir: "/"})
	assert.Check(t, err != nil)
	_, err = NewSession(Options{Policy: MustPreset(2), Dir: strings.TrimPrefix(s.Dir(), "/")})
	assert.Check(t, err != nil, "relative directories are refused")
}

// TestListPastPathMax: a tree deeper than PATH_MAX lists what can be
// listed, says the list is incomplete, and is no error.
func TestListPastPathMax(t *testing.T) {
	dir := t.TempDir()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	assert.NilError(t, err)
	name := strings.Repeat("d", 200)
	for range 30 { // 30 × 201 bytes: past PATH_MAX (4096)
		assert.NilError(t, unix.Mkdirat(fd, name, 0o755))
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		unix.Close(fd)
		assert.NilError(t, err)
		fd = next
	}
	unix.Close(fd)
	files, more, err := list(dir, maxListAll)
	assert.NilError(t, err)
	assert.Check(t, more, "the list does not say it is incomplete")
	assert.Check(t, len(files) > 0 && len(files) < 30, "listed %d", len(files))
	assert.NilError(t, removeTree(dir))
}

// TestWriteFileWholeOrNothing: at L6 the session's filesystem counts
// pages, not bytes. Filled with small files it has less room than the
// bytes say, and a write that does not fit fails: the old content is
// kept whole, a new name is left unmade, and nothing half-written stays.
func TestWriteFileWholeOrNothing(t *testing.T) {
	const quota = 4 << 20
	if !HostRoot() {
		t.Skip("the session's own filesystem, which counts pages, is mounted by host root only")
	}
	s, err := NewSession(Options{Policy: MustPreset(6), Root: testRoot(t), Quota: quota})
	assert.NilError(t, err)
	t.Cleanup(func() { assert.Check(t, s.Close()) })
	old := []byte("the old content\n")
	assert.NilError(t, s.WriteFile("keep.txt", old))
	// 400 files of 4097 bytes: 1.6 MB counted, 3.2 MiB of pages held.
	res, err := s.Run(context.Background(), Command{Path: python, Args: []string{"-c",
		"import os\nos.mkdir('fill')\nfor i in range(400):\n    open(f'fill/{i}', 'wb').write(b'x' * 4097)"}})
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("L6 cannot be had here: %v", err)
	}
	assert.NilError(t, err)
	assert.Assert(t, is.Equal(res.ExitCode, 0), "%s: %s", res.Reason, res.Stderr)

	big := bytes.Repeat([]byte("y"), 2<<20)
	err = s.WriteFile("keep.txt", big)
	assert.Check(t, is.ErrorContains(err, `"keep.txt" was not written (its old content is kept)`))
	assert.Check(t, errors.Is(err, unix.ENOSPC), "%v", err)
	got, err := s.ReadFile("keep.txt")
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(got, old), "the old content, whole")

	err = s.WriteFile("new.txt", big)
	assert.Check(t, is.ErrorContains(err, `"new.txt" was not written (no file was made)`))
	_, err = s.ReadFile("new.txt")
	assert.Check(t, is.ErrorIs(err, fs.ErrNotExist), "a failed write of a new name leaves no file")
	files, err := s.List()
	assert.NilError(t, err)
	for _, f := range files {
		assert.Check(t, !strings.Contains(f.Name, ".sandboxlab-write-"), "left behind: %s", f.Name)
	}
	assert.NilError(t, s.WriteFile("keep.txt", []byte("new\n")), "a write that fits replaces it")
	got, err = s.ReadFile("keep.txt")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(string(got), "new\n"))
}
