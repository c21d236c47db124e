package landlock

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/skip"
)

// The test binary doubles as the restricted process: with helperEnv set
// it restricts itself and tries what the test asks, reporting each
// attempt's errno on stdout.
const helperEnv = "SANDBOXLAB_LANDLOCK_HELPER"

func TestMain(m *testing.M) {
	if dirs := os.Getenv(helperEnv); dirs != "" {
		os.Exit(helper(strings.Split(dirs, ":")))
	}
	os.Exit(m.Run())
}

// helper restricts itself to reading /etc and /usr and writing rw, then
// tries: read /etc/hostname, write rw/ok, write out/no, read out/secret,
// connect to the TCP port in SANDBOXLAB_LANDLOCK_PORT, and to the one in
// SANDBOXLAB_LANDLOCK_OPEN_PORT, which its rules name.
func helper(args []string) int {
	rw, out := args[0], args[1]
	runtime.LockOSThread() // the domain is this thread's
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		os.Stdout.WriteString("nnp " + err.Error())
		return 1
	}
	open, _ := strconv.ParseUint(os.Getenv("SANDBOXLAB_LANDLOCK_OPEN_PORT"), 10, 16)
	abi, err := Restrict(Rules{ReadExec: []string{"/etc", "/usr", "/no/such/dir"}, ReadWrite: []string{rw},
		ConnectTCP: []uint16{uint16(open)}}, 1)
	if err != nil {
		os.Stdout.WriteString("restrict " + err.Error())
		return 1
	}
	report := func(what string, err error) {
		os.Stdout.WriteString(what + "=" + errName(err) + "\n")
	}
	_, err = os.ReadFile("/etc/hostname")
	report("read-etc", err)
	report("write-rw", os.WriteFile(filepath.Join(rw, "ok"), []byte("x"), 0o644))
	report("write-out", os.WriteFile(filepath.Join(out, "no"), []byte("x"), 0o644))
	_, err = os.ReadFile(filepath.Join(out, "secret"))
	report("read-out", err)
	if abi >= 4 {
		c, err := net.Dial("tcp4", "127.0.0.1:"+os.Getenv("SANDBOXLAB_LANDLOCK_PORT"))
		if err == nil {
			c.Close()
		}
		report("connect", err)
		c, err = net.Dial("tcp4", "127.0.0.1:"+os.Getenv("SANDBOXLAB_LANDLOCK_OPEN_PORT"))
		if err == nil {
			c.Close()
		}
		report("connect-open", err)
	}
	return 0
}

func errName(err error) string {
	var errno unix.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &errno):
		return unix.ErrnoName(errno)
	}
	return err.Error()
}

func TestRestrict(t *testing.T) {
	skip.If(t, ABI() < 1, "Landlock is not enabled on this kernel")
	rw, out := t.TempDir(), t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(out, "secret"), []byte("s"), 0o644))
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	assert.NilError(t, err)
	defer ln.Close()
	open, err := net.Listen("tcp4", "127.0.0.1:0")
	assert.NilError(t, err)
	defer open.Close()
	cmd := exec.Command("/proc/self/exe", "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+rw+":"+out,
		"SANDBOXLAB_LANDLOCK_PORT="+strings.TrimPrefix(ln.Addr().String(), "127.0.0.1:"),
		"SANDBOXLAB_LANDLOCK_OPEN_PORT="+strings.TrimPrefix(open.Addr().String(), "127.0.0.1:"))
	b, err := cmd.Output()
	assert.NilError(t, err, "%s", b)
	got := string(b)
	for _, want := range []string{"read-etc=ok", "write-rw=ok", "write-out=EACCES", "read-out=EACCES"} {
		assert.Check(t, is.Contains(got, want+"\n"))
	}
	if ABI() >= 4 {
		assert.Check(t, is.Contains(got, "connect=EACCES\n"), "TCP connect is denied from ABI 4 on")
		assert.Check(t, is.Contains(got, "connect-open=ok\n"), "but to the port the rules name")
	}
	_, err = os.Stat(filepath.Join(out, "no"))
	assert.Check(t, os.IsNotExist(err), "the denied write reached the disk")
}

func TestRestrictRefusesAnOldABI(t *testing.T) {
	_, err := Restrict(Rules{}, 1000)
	assert.Check(t, errors.Is(err, ErrUnsupported))
	assert.Check(t, is.ErrorContains(err, "needs 1000"))
}
