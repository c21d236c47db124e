package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// rootProbe reports, as JSON, what the program finds of its root: which
// paths exist, what writing in a few places gives, /dev's entries and
// what it reads of /etc/os-release.
const rootProbe = `
import errno, json, os, sys
def tried(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
def write(path):
    with open(path, "w") as f:
        f.write("x")
out = {
    "exists": {p: os.path.lexists(p) for p in sys.argv[1:]},
    "write": {p: tried(lambda p=p: write(p)) for p in ["/new-file", "/usr/new-file", "/etc/new-file", "/dev/new-file", "mine.txt", "/tmp/mine.txt", "/dev/null"]},
    "dev": sorted(os.listdir("/dev")),
    "os_release": open("/etc/os-release").read().split("\n")[0],
    "cwd": os.getcwd(),
}
print(json.dumps(out))
`

type rootSeen struct {
	Exists    map[string]bool
	Write     map[string]string
	Dev       []string
	OSRelease string `json:"os_release"`
	Cwd       string
}

func probeRoot(t *testing.T, root string, p Policy, paths ...string) rootSeen {
	t.Helper()
	res := runPy(t, root, p, Command{}, rootProbe, paths...)
	assert.Assert(t, is.Equal(res.ExitCode, 0), "%s %s", res.Reason, res.Stderr)
	var seen rootSeen
	assert.NilError(t, json.Unmarshal([]byte(res.Stdout), &seen), res.Stdout)
	return seen
}

// TestAllowlistRoot: at L6 the program's root holds what it needs and
// nothing else of the host; only the session and the scratch directories
// take writes. L5 keeps the host's tree.
func TestAllowlistRoot(t *testing.T) {
	root := testRoot(t)
	// A host directory L5 leaves in sight (it is not a scratch
	// directory), made for the test where the host keeps its own data.
	base := "/var/lib"
	if _, err := os.Stat(base); err != nil || !HostRoot() {
		base = filepath.Dir(root) // an ordinary user cannot write /var/lib; /tmp is private at L5 too
	}
	host, err := os.MkdirTemp(base, "sandboxlab-rootfs-test-")
	assert.NilError(t, err)
	t.Cleanup(func() { os.RemoveAll(host) })
	assert.NilError(t, os.Chmod(host, 0o755))
	absent := []string{"/var/lib", "/var/cache", "/srv", "/opt", "/mnt", "/home", "/root", "/boot", "/sys", host}
	present := []string{"/usr/bin/python3", "/bin", "/etc/passwd", "/etc/ssl/certs", "/proc/self", "/tmp", "/var/tmp", "/run", "/dev/shm"}

	l6 := probeRoot(t, root, MustPreset(6), append(absent, present...)...)
	for _, p := range absent {
		assert.Check(t, !l6.Exists[p], "L6: the host's %s is in the program's root", p)
	}
	for _, p := range present {
		assert.Check(t, l6.Exists[p], "L6: %s is missing from the program's root", p)
	}
	for _, p := range []string{"/new-file", "/usr/new-file", "/etc/new-file", "/dev/new-file"} {
		assert.Check(t, is.Equal(l6.Write[p], "EROFS"), "L6: writing %s", p)
	}
	for _, p := range []string{"mine.txt", "/tmp/mine.txt", "/dev/null"} {
		assert.Check(t, is.Equal(l6.Write[p], "ok"), "L6: writing %s", p)
	}
	assert.Check(t, is.DeepEqual(l6.Dev, []string{"fd", "full", "mqueue", "null", "random", "shm", "stderr", "stdin", "stdout", "tty", "urandom", "zero"}))
	assert.Check(t, strings.HasPrefix(l6.OSRelease, "PRETTY_NAME=") || strings.HasPrefix(l6.OSRelease, "NAME="), l6.OSRelease)

	l5 := probeRoot(t, root, MustPreset(5), host, "/var/lib", "/srv")
	for _, p := range []string{host, "/var/lib", "/srv"} {
		if _, err := os.Stat(p); err == nil {
			assert.Check(t, l5.Exists[p], "L5 must keep the host's tree: %s is gone", p)
		}
	}
}

// TestRootBindsProgramAndWorkdir: a program outside every exposed path,
// and a working directory outside the session (with the private workdir
// taken away), are bound into the root: the program runs where the
// policy says.
func TestRootBindsProgramAndWorkdir(t *testing.T) {
	root := testRoot(t)
	app := ownedDir(t, root, "app")
	prog := filepath.Join(app, "mytrue")
	b, err := os.ReadFile("/bin/true")
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(prog, b, 0o755))
	res, err := Run(context.Background(), MustPreset(6), Command{Path: prog})
	assert.NilError(t, err)
	assert.Check(t, is.Equal(res.Reason, ReasonExited), res.Stderr)
	assert.Check(t, is.Equal(res.ExitCode, 0), res.Stderr)

	p := MustPreset(6)
	p.Workspace.Private = false
	res = runPy(t, root, p, Command{Dir: app}, "import os; print(os.getcwd()); print(sorted(os.listdir('.')))")
	assert.Check(t, is.Equal(res.ExitCode, 0), res.Stderr)
	assert.Check(t, is.Equal(res.Stdout, app+"\n['mytrue']\n"))
}

// TestRootHidesBelowExposed: Hide still covers what lies below an
// exposed path.
func TestRootHidesBelowExposed(t *testing.T) {
	root := testRoot(t)
	p := MustPreset(6)
	p.Filesystem.Expose = append(p.Filesystem.Expose, "/etc/hostname")
	p.Filesystem.Hide = append(p.Filesystem.Hide, "/etc/hostname")
	res := runPy(t, root, p, Command{}, "print(repr(open('/etc/hostname').read()))")
	assert.Check(t, is.Equal(res.ExitCode, 0), res.Stderr)
	assert.Check(t, is.Equal(res.Stdout, "''\n"))
}

// TestExposeValidated: exposed paths are absolute, and never / itself.
func TestExposeValidated(t *testing.T) {
	for _, bad := range []string{"usr", "/", "/usr/.."} {
		p := MustPreset(6)
		p.Filesystem.Expose = []string{bad}
		err := p.Validate()
		var pe *PolicyError
		assert.Check(t, errors.As(err, &pe), "%q: %v", bad, err)
		if pe != nil {
			assert.Check(t, is.Equal(pe.Field, "Filesystem.Expose[0]"))
		}
	}
}

// TestSessionAtFixedPath: at L6 the session is at SessionMount, and the
// program finds everything there, itself included when it lies in the
// session, whether its init started cold or was prestarted; at L5 the
// session stays at its host path.
func TestSessionAtFixedPath(t *testing.T) {
	root := testRoot(t)
	s, err := NewSession(Options{Policy: MustPreset(6), Root: root})
	assert.NilError(t, err)
	defer func() { assert.Check(t, s.Close()) }()
	prog := filepath.Join(s.Dir(), "where.sh")
	assert.NilError(t, os.WriteFile(prog, []byte("#!/bin/sh\npwd\necho \"$HOME $TMPDIR $0\"\necho x > mine.txt\n"), 0o755))
	id := HostIdentity()
	assert.NilError(t, os.Chown(prog, id.UID, id.GID))
	want := SessionMount + "\n" + SessionMount + " " + SessionMount + " " + SessionMount + "/where.sh\n"
	for _, warm := range []bool{false, true} {
		if warm {
			s.Prepare(Command{Path: prog})
		}
		res, err := s.Run(context.Background(), Command{Path: prog})
		assert.NilError(t, err)
		assert.Check(t, is.Equal(res.ExitCode, 0), "warm %v: %s %s", warm, res.Reason, res.Stderr)
		assert.Check(t, is.Equal(res.Stdout, want), "warm %v", warm)
		_, err = os.Stat(filepath.Join(s.Dir(), "mine.txt"))
		assert.Check(t, err, "warm %v: the program's file is not in the session", warm)
	}

	res := runPy(t, root, MustPreset(5), Command{}, "import os; print(os.getcwd())")
	assert.Check(t, res.Stdout != SessionMount+"\n" && strings.Contains(res.Stdout, sessionPrefix), "L5 started in %q", res.Stdout)
}
