package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/sandbox/procfs"
	"sandboxlab/sandbox/sandboxtest"
)

// hostileTree is what a program can do to its session's tree, as an agent
// would: a chain deeper than the host's open-file limit during the
// removal and longer than PATH_MAX, long names, directories with mode 000
// inside one another, sticky, read-only, write-only and unsearchable
// ones, a FIFO and a socket, names that are not UTF-8, hard links (one to
// a host file when it can see one), links to a host file and directory,
// read-only files, an attempt at chattr +i, and last its own directory's
// mode. argv: depth, the host canary file, the host canary directory, the
// mode for ".".
const hostileTree = `
import errno, fcntl, os, socket, struct, sys
depth, canary_file, canary_dir, top_mode = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4], 8)

def chain(top, depth, name):
    here = os.open(".", os.O_RDONLY)
    os.mkdir(top)
    os.chdir(top)
    for _ in range(depth):
        os.mkdir(name)
        os.chdir(name)
    open("bottom", "w").write("x")
    os.fchdir(here)
    os.close(here)

chain("deep", depth, "d")
chain("long", 30, "L" * 250)
for name, mode in [("locked", 0), ("noexec", 0o600), ("readonly", 0o500), ("writeonly", 0o300), ("sticky", 0o1777)]:
    os.makedirs(name + "/inner")
    open(name + "/inner/f", "w").write("x")
    open(name + "/f", "w").write("x")
    os.chmod(name + "/f", 0o444)
    os.chmod(name + "/inner", mode)
    os.chmod(name, mode)
os.makedirs("nest/a/b")
open("nest/a/b/f", "w").write("x")
for d in ("nest/a/b", "nest/a", "nest"):
    os.chmod(d, 0)
os.mkfifo("fifo")
s = socket.socket(socket.AF_UNIX)
s.bind("sock")
s.close()
os.mkdir(b"\xff\xfe")
open(b"\xff\xfe/bad\x80name", "w").write("x")
open(b"caf\xe9", "w").write("x")
open("file", "w").write("x")
os.link("file", "hardlink")
os.link("file", "deep/d/hardlink")
try:
    os.link(canary_file, "hostlink")
    print("hostlink: made")
except OSError as e:
    print("hostlink:", errno.errorcode[e.errno])
os.symlink(canary_file, "to-host-file")
os.symlink(canary_dir, "to-host-dir")
os.symlink(canary_dir + "/", "deep/d/to-host-dir")
os.mkdir("wide")
for i in range(1000):
    open("wide/f%d" % i, "w").close()
os.mkdir("widedirs")
for i in range(200):
    os.mkdir("widedirs/d%d" % i)
    open("widedirs/d%d/f" % i, "w").close()
fd = os.open("file", os.O_RDONLY)
try:
    fcntl.ioctl(fd, 0x40086602, struct.pack("l", 0x10))  # FS_IOC_SETFLAGS, FS_IMMUTABLE_FL
    print("immutable: set")
except OSError as e:
    print("immutable:", errno.errorcode[e.errno])
os.close(fd)
os.chmod(".", top_mode)
print("built")
`

// hostileDepth is the chain's depth: past PATH_MAX, and past the
// open-file limit the removals below run with (removalFDs).
const (
	hostileDepth = 2500
	removalFDs   = 512
)

// roomy is the level's preset with time enough to build the tree on a
// slow, busy disk.
func roomy(level int) Policy {
	p := MustPreset(level)
	p.Watchdog = 2 * time.Minute
	if p.Limits.Wall > 0 {
		p.Limits.Wall, p.Limits.CPU, p.Limits.CPUHard = time.Minute, 30*time.Second, 31*time.Second
	}
	return p
}

// hostileSession is a session whose program has built hostileTree.
type hostileSession struct {
	root, dir string
	s         *Session
	survived  func() // checks the host canaries
}

func newHostileSession(t *testing.T, level int, topMode os.FileMode) *hostileSession {
	t.Helper()
	h := &hostileSession{root: testRoot(t)}
	file, dir, check := hostCanaries(t, h.root)
	h.survived = check
	s, err := NewSession(Options{Policy: roomy(level), Root: h.root})
	assert.NilError(t, err)
	h.s, h.dir = s, s.Dir()
	start := time.Now()
	res, err := s.Run(context.Background(), Command{Path: python, Args: []string{"-c", hostileTree,
		strconv.Itoa(hostileDepth), file, dir, strconv.FormatUint(uint64(topMode), 8)}})
	assert.NilError(t, err)
	assert.Assert(t, is.Equal(res.ExitCode, 0), "%s: %s %s", res.Reason, res.Message, res.Stderr)
	t.Logf("L%d: the program built the tree in %v: %s", level, time.Since(start).Round(time.Millisecond),
		strings.Join(strings.Fields(res.Stdout), " "))
	assert.Check(t, !strings.Contains(res.Stdout, "immutable: set"), "the program flagged a file immutable")
	if level < 5 { // from L5 the host's files are out of its sight
		assert.Check(t, is.Contains(res.Stdout, "hostlink: made"))
	}
	return h
}

// runAgain runs a program in s that reads the tree, and fails the test
// unless it ran: the tree must neither lock the session out nor wedge
// its quota.
func (h *hostileSession) runAgain(t *testing.T, s *Session) {
	t.Helper()
	res, err := s.Run(context.Background(), Command{Path: python, Args: []string{"-c",
		"import os\nos.chmod('nest', 0o700)\nprint('deep' in os.listdir('.'), os.listdir('nest'))"}})
	assert.NilError(t, err)
	assert.Check(t, is.Equal(res.Reason, ReasonExited), res.Message)
	assert.Check(t, is.Equal(res.Stdout, "True ['a']\n"), res.Stderr)
}

// assertGone checks that nothing of the session is left on the host and
// that the host's files the tree linked to are untouched.
func (h *hostileSession) assertGone(t *testing.T) {
	t.Helper()
	gone(t, h.dir)
	gone(t, h.dir+ownerSuffix)
	entries, err := os.ReadDir(h.root)
	assert.NilError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Check(t, is.DeepEqual(names, []string{"outside"}))
	h.survived()
}

// TestHostileSessionRemoved: at L2 and L5 the program builds hostileTree
// in its session. A later run of the session is not refused, resumed or
// not; and the session goes without a trace by Close, by what 'sandboxlab
// session rm' does (resume, then Close) and by the janitor once its owner
// is dead, with fewer open files allowed than the tree is deep.
func TestHostileSessionRemoved(t *testing.T) {
	for _, level := range []int{2, 5} {
		t.Run(fmt.Sprintf("L%d/close", level), func(t *testing.T) {
			h := newHostileSession(t, level, 0)
			h.runAgain(t, h.s)
			withOpenFiles(t, removalFDs, func() { assert.NilError(t, h.s.Close()) })
			h.assertGone(t)
		})
		t.Run(fmt.Sprintf("L%d/rm", level), func(t *testing.T) {
			h := newHostileSession(t, level, 0o1777)
			again, err := NewSession(Options{Policy: roomy(level), Dir: h.dir})
			assert.NilError(t, err, "resuming the session")
			h.runAgain(t, again)
			withOpenFiles(t, removalFDs, func() { assert.NilError(t, again.Close()) })
			h.assertGone(t)
			assert.Check(t, h.s.Close(), "closing once more")
		})
		t.Run(fmt.Sprintf("L%d/janitor", level), func(t *testing.T) {
			h := newHostileSession(t, level, 0o500)
			dead := exec.Command("/bin/true")
			assert.NilError(t, dead.Start())
			p, err := procfs.Stat(dead.Process.Pid)
			assert.NilError(t, err)
			assert.NilError(t, dead.Wait())
			assert.NilError(t, os.WriteFile(h.dir+ownerSuffix, fmt.Appendf(nil, "%d %d\n", p.PID, p.Start), 0o644))
			var removed []string
			withOpenFiles(t, removalFDs, func() {
				removed, err = CollectGarbage(h.root)
				assert.NilError(t, err)
			})
			assert.Check(t, is.DeepEqual(removed, []string{h.dir}))
			h.assertGone(t)
			assert.Check(t, h.s.Close(), "closing once the janitor has removed it")
		})
	}
}

// TestQuotaSeesThroughModes: what the program hides behind a mode still
// counts against the quota, and measuring it leaves the mode as the
// program set it.
func TestQuotaSeesThroughModes(t *testing.T) {
	f := newFileFixture(t, 2, 1<<20)
	f.program(t, "import os\nos.makedirs('hide/deeper')\nopen('hide/deeper/fill', 'wb').write(os.urandom(2 << 20))\n"+
		"os.chmod('hide/deeper', 0)\nos.chmod('hide', 0)")
	res := f.program(t, "open('ran', 'w').write('ran')")
	assert.Check(t, is.Equal(res.Reason, ReasonRefused))
	assert.Check(t, is.Contains(res.Message, "over its quota"))
	st, err := os.Lstat(filepath.Join(f.s.Dir(), "hide"))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(st.Mode().Perm(), os.FileMode(0)), "measuring changed the program's mode")
}

// TestRemovalAsOrdinaryUser re-runs the removal tests as an ordinary
// user, for whom modes matter: as root they cannot stop the removal.
func TestRemovalAsOrdinaryUser(t *testing.T) {
	if !HostRoot() {
		t.Skipf("the tests already run as uid %d, an ordinary user", os.Geteuid())
	}
	cred, name := sandboxtest.OrdinaryUser(t)
	bin := copyTestBinary(t, testRoot(t))
	args := []string{"-test.run=^(TestRemoveTree.*|TestDiskUsageSeesEverything|TestResumeRepairsTheMode|TestHostileSessionRemoved|TestQuotaSeesThroughModes)$",
		"-test.count=1", "-test.v"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = filepath.Dir(bin)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "TMPDIR=/tmp", "LANG=C.UTF-8"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	out, err := cmd.CombinedOutput()
	t.Logf("as %s (uid %d):\n%s", name, cred.Uid, out)
	assert.NilError(t, err, "as %s", name)
	for _, test := range []string{"TestRemoveTreeHostile", "TestRemoveTreeDeep", "TestDiskUsageSeesEverything",
		"TestResumeRepairsTheMode", "TestHostileSessionRemoved", "TestQuotaSeesThroughModes"} {
		assert.Check(t, is.Contains(string(out), "--- PASS: "+test+" "), "as %s", name)
	}
}

// copyTestBinary copies the test binary into dir, out of a directory
// only root may enter.
func copyTestBinary(t *testing.T, dir string) string {
	t.Helper()
	self, err := os.Executable()
	assert.NilError(t, err)
	bin := filepath.Join(dir, "sandbox.test")
	src, err := os.Open(self)
	assert.NilError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	assert.NilError(t, err)
	_, err = io.Copy(dst, src)
	assert.NilError(t, err)
	assert.NilError(t, dst.Close())
	return bin
}
