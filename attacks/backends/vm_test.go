package backends

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/sandbox/procfs"
)

// shipped returns the shipped profile name.
func shipped(t *testing.T, name string) *Profile {
	t.Helper()
	for _, p := range Shipped() {
		if p.Name == name {
			return &p
		}
	}
	t.Fatalf("no shipped profile %s", name)
	return nil
}

// programIdentity is the identity sandboxlab gives programs.
func programIdentity() Identity {
	if os.Geteuid() == 0 {
		return Identity{UID: 65534, GID: 65534}
	}
	return Identity{UID: os.Geteuid(), GID: os.Getegid()}
}

// openColumn opens the shipped profile name's column in a temporary
// directory reachable by the program's identity, or skips the test when
// the column cannot run here.
func openColumn(t *testing.T, name string) (*Column, string) {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "sandboxlab-backends-test-")
	assert.NilError(t, err)
	assert.NilError(t, os.Chmod(dir, 0o711))
	t.Cleanup(func() { os.RemoveAll(dir) })
	c, skip, err := OpenColumn(shipped(t, name), ColumnOptions{Program: programIdentity(), Root: os.Geteuid() == 0, TempDir: dir})
	assert.NilError(t, err)
	if skip != "" {
		t.Skipf("the %s column cannot run here: %s", name, skip)
	}
	t.Cleanup(func() { assert.Check(t, c.Close()) })
	return c, dir
}

// runOnce runs source under column c in a fresh working directory (dir's
// work) and returns the outcome, with the run's instance closed and its
// scratch removed.
func runOnce(t *testing.T, c *Column, dir, source string) *Outcome {
	t.Helper()
	work := filepath.Join(dir, "work")
	scratch := filepath.Join(dir, "scratch")
	assert.NilError(t, mkdirOwned(work, 0o700, c.Program))
	assert.NilError(t, os.Mkdir(scratch, 0o700))
	defer os.RemoveAll(scratch) // the working directory stays for the test to read
	token := procfs.Tag()
	in, err := c.Prepare(RunSpec{Program: []string{python, "-c", source, token}, Workdir: work, Home: "/nonexistent",
		Dir: "/", Env: []string{"PATH=/usr/bin:/bin"}, Scratch: scratch, Token: token, OutputMax: 1 << 20})
	assert.NilError(t, err)
	defer func() { assert.Check(t, in.Close()) }()
	r, err := Start(in.Launch)
	assert.NilError(t, err)
	o, err := r.Wait(context.Background())
	assert.NilError(t, err)
	assertGone(t, token)
	return o
}

// TestGuestRunsAProgram boots one guest (about 6–9 s under TCG): the
// program's output, error output and exit status come back through the
// job directory, it ran as the unprivileged user in a read-only root with
// no network device, the phases are timed, and nothing of the guest is
// left.
func TestGuestRunsAProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a virtual machine; the attacks' one cell under qemu covers -short")
	}
	c, dir := openColumn(t, "qemu")
	began := time.Now()
	o := runOnce(t, c, dir, `
import os, socket, sys
print("uid", os.getuid(), "cwd", os.getcwd())
print("nets", sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]))
try:
    open("/usr/sandboxlab-write", "w")
except OSError as e:
    print("usr:", e.strerror)
open("out.txt", "w").write("written in the guest")
print("to stderr", file=sys.stderr)
sys.exit(3)
`)
	t.Logf("%v in all; guest %+v; stdout %q", time.Since(began), *o.Guest, o.Stdout)
	assert.Check(t, is.Equal(o.StoppedBy, ""), "console: %s", o.Guest.Console)
	assert.Check(t, is.Equal(o.ExitCode, 3), "stderr: %s", o.Stderr)
	assert.Check(t, is.Contains(string(o.Stdout), "uid "+itoa(c.Program.UID)))
	assert.Check(t, is.Contains(string(o.Stdout), "usr: Read-only file system"))
	assert.Check(t, is.Contains(string(o.Stdout), "nets ['lo']"), "no network device but loopback")
	written, err := os.ReadFile(filepath.Join(dir, "work", "out.txt"))
	assert.Check(t, err == nil && string(written) == "written in the guest", "%v %q", err, written)
	assert.Check(t, is.Contains(string(o.Stderr), "to stderr"))
	assert.Check(t, o.Guest.Started && o.Guest.Finished)
	assert.Check(t, o.Guest.Boot > 0 && o.Guest.Program > 0 && o.Guest.Shutdown > 0)
	assertNoEmulator(t, dir)
}

// assertNoEmulator checks that no emulator of the test's runs is left.
func assertNoEmulator(t *testing.T, dir string) {
	t.Helper()
	out, _ := exec.Command("pgrep", "-af", "qemu-system").Output()
	for _, line := range strings.Split(string(out), "\n") {
		assert.Check(t, !strings.Contains(line, dir), "an emulator is left: %s", line)
	}
}

// TestGuestCancelled stops a guest mid-run: the emulator is killed, the
// outcome says so, and nothing of the run is left.
func TestGuestCancelled(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a virtual machine")
	}
	c, dir := openColumn(t, "qemu")
	work, scratch := filepath.Join(dir, "work"), filepath.Join(dir, "scratch")
	assert.NilError(t, mkdirOwned(work, 0o700, c.Program))
	assert.NilError(t, os.Mkdir(scratch, 0o700))
	token := procfs.Tag()
	in, err := c.Prepare(RunSpec{Program: []string{python, "-c", "import time; time.sleep(600)", token}, Workdir: work, Home: "/nonexistent",
		Dir: "/", Scratch: scratch, Token: token, OutputMax: 1 << 20})
	assert.NilError(t, err)
	r, err := Start(in.Launch)
	assert.NilError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	o, err := r.Wait(ctx)
	assert.NilError(t, err)
	assert.Check(t, in.Close())
	assert.Check(t, is.Equal(o.StoppedBy, StopCancelled))
	assert.Check(t, !o.Guest.Finished)
	assertGone(t, token)
	assertNoEmulator(t, dir)
}

// TestFallbackToTCG: a column that tried KVM falls back to TCG once,
// and says why.
func TestFallbackToTCG(t *testing.T) {
	c := &Column{Profile: shipped(t, "qemu"), vm: &vmColumn{accel: accelKVM}, Notes: []string{"", "Debian's kernel x"}}
	c.setAccel("Debian's kernel x")
	assert.Check(t, is.Equal(c.vars.Accel, "kvm"))
	assert.Check(t, is.Equal(c.vars.CPU, "host"))
	assert.Check(t, c.Fallback("exit status 1: KVM: entry failed"))
	assert.Check(t, is.Equal(c.vars.Accel, "tcg"))
	assert.Check(t, is.Equal(c.vars.CPU, "max"))
	assert.Check(t, is.Contains(c.Notes[0], "TCG, an emulated CPU"))
	assert.Check(t, is.Contains(c.Notes[0], "KVM did not run the guest: exit status 1: KVM: entry failed"))
	assert.Check(t, !c.Fallback("again"), "once on TCG there is nothing slower")
	assert.Check(t, !(&Column{}).Fallback("x"), "a column that is not a guest has no fallback")
}
