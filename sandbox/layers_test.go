package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/poll"

	"sandboxlab/sandbox/procfs"
)

// layerCase is one layer biting on a real program: run at Level it must
// bite, one level below it must not.
type layerCase struct {
	name  string
	level int
	// run runs the program at level n and reports whether the layer bit,
	// with what the host saw.
	run func(t *testing.T, root string, n int) (bit bool, saw string)
}

var layerCases = []layerCase{
	{"wall clock stops a busy loop", 1, func(t *testing.T, root string, n int) (bool, string) {
		res := runPy(t, root, MustPreset(n), Command{}, "while True: pass")
		return res.Reason == ReasonTimeout && res.Wall < 3*time.Second, fmt.Sprintf("%s after %v", res.Reason, res.Wall)
	}},
	{"address-space limit refuses 1 GiB", 1, func(t *testing.T, root string, n int) (bool, string) {
		res := runPy(t, root, MustPreset(n), Command{},
			"import mmap\nm = mmap.mmap(-1, 1 << 30)\nprint('allocated')")
		return res.OOM && res.Reason == ReasonMemory && !strings.Contains(res.Stdout, "allocated"),
			fmt.Sprintf("%s, oom=%v, stdout %q", res.Reason, res.OOM, res.Stdout)
	}},
	{"output cap cuts a 50 MB print", 1, func(t *testing.T, root string, n int) (bool, string) {
		// Printing 50 MB can take longer than the 1.5 s wall clock on a
		// busy machine: take the clock away, it is not under test here.
		p := MustPreset(n)
		p.Limits.Wall, p.Watchdog = 20*time.Second, 20*time.Second
		res := runPy(t, root, p, Command{},
			"import sys\nfor i in range(50):\n    sys.stdout.write('x' * (1 << 20))\nprint('THE END')")
		return res.StdoutTruncated && len(res.Stdout) <= 8000 && strings.HasSuffix(res.Stdout, "THE END\n"),
			fmt.Sprintf("%d of %d bytes returned", len(res.Stdout), res.StdoutBytes)
	}},
	{"sweep kills a child left running", 1, func(t *testing.T, root string, n int) (bool, string) {
		tok := token(t)
		runPy(t, root, MustPreset(n), Command{},
			"import os, time, sys\nif os.fork() == 0:\n    time.sleep(30)\n", tok)
		left := len(alive(tok))
		killTagged(tok)
		return left == 0, fmt.Sprintf("%d children alive after the run", left)
	}},
	{"environment is scrubbed", 2, func(t *testing.T, root string, n int) (bool, string) {
		secret := token(t)
		res := runPy(t, root, MustPreset(n), Command{Env: append(os.Environ(), "FAKE_API_KEY="+secret)},
			"import os\nprint(sorted(os.environ.items()))")
		return !strings.Contains(res.Stdout, secret), fmt.Sprintf("secret in output: %v", strings.Contains(res.Stdout, secret))
	}},
	{"program works in the session directory", 2, func(t *testing.T, root string, n int) (bool, string) {
		app := ownedDir(t, root, "app")
		res := runPy(t, root, MustPreset(n), Command{Dir: app}, "import os\nprint(os.getcwd())")
		cwd := strings.TrimSpace(res.Stdout)
		return cwd != app && strings.HasPrefix(filepath.Base(cwd), sessionPrefix), "cwd " + cwd
	}},
	{"PID namespace ends a detached daemon", 3, func(t *testing.T, root string, n int) (bool, string) {
		tok := token(t)
		runPy(t, root, MustPreset(n), Command{}, `
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(30)
    os._exit(0)
os.wait()
`, tok)
		left := len(alive(tok))
		killTagged(tok)
		return left == 0, fmt.Sprintf("%d daemons alive after the run", left)
	}},
	{"monitor stops a fork bomb past 16", 3, func(t *testing.T, root string, n int) (bool, string) {
		tok := token(t)
		res := runPy(t, root, MustPreset(n), Command{}, `
import os, time
for i in range(40):
    if os.fork() == 0:
        time.sleep(5)
        os._exit(0)
time.sleep(5)
`, tok)
		killTagged(tok)
		return res.Reason == ReasonProcesses, string(res.Reason)
	}},
	{"network namespace: connect fails with ENETUNREACH", 4, func(t *testing.T, root string, n int) (bool, string) {
		ln, got := listen(t)
		res := runPy(t, root, MustPreset(n), Command{}, `
import socket, sys
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2)
    s.sendall(b"hello")
    s.close()
except OSError as e:
    print(e.errno, file=sys.stderr)
`, fmt.Sprint(ln.Addr().(*net.TCPAddr).Port))
		received := got()
		return received == "" && strings.Contains(res.Stderr, "101"), fmt.Sprintf("listener got %q, stderr %q", received, res.Stderr)
	}},
	{"mount namespace hides a fake key", 5, func(t *testing.T, root string, n int) (bool, string) {
		home := ownedDir(t, root, "home")
		secret := token(t)
		key := filepath.Join(home, "id_ed25519")
		assert.NilError(t, os.WriteFile(key, []byte(secret), 0o600))
		assert.NilError(t, os.Chown(key, HostIdentity().UID, HostIdentity().GID))
		p := MustPreset(n)
		if p.Filesystem.Hide != nil { // the layer is on
			p.Filesystem.Hide = append(p.Filesystem.Hide, home)
		}
		res := runPy(t, root, p, Command{}, "import sys\ntry:\n    print(open(sys.argv[1]).read())\nexcept OSError as e:\n    print(e)", key)
		return !strings.Contains(res.Stdout, secret), "stdout " + res.Stdout
	}},
	{"no capabilities: mounting fails", 5, func(t *testing.T, root string, n int) (bool, string) {
		tok := token(t)
		res := runPy(t, root, MustPreset(n), Command{}, mountAttempt, tok)
		return !strings.Contains(res.Stdout, "mounted"), strings.TrimSpace(res.Stdout + res.Stderr)
	}},
}

// mountAttempt tries to mount a tmpfs, first in a new mount namespace,
// then through a new user namespace (which would hand back capabilities).
const mountAttempt = `
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
for flags in (CLONE_NEWNS, CLONE_NEWUSER | CLONE_NEWNS):
    if os.fork() == 0:
        ok = libc.unshare(flags) == 0 and libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0
        print(("mounted with %#x" if ok else "refused with %#x: " + os.strerror(ctypes.get_errno())) % flags, flush=True)
        os._exit(0)
    os.wait()
`

// listen starts a loopback listener that records what it receives; got
// returns it once the listener has been closed.
func listen(t *testing.T) (net.Listener, func() string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	var mu sync.Mutex
	var b strings.Builder
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			data, _ := io.ReadAll(c)
			c.Close()
			mu.Lock()
			b.Write(data)
			b.WriteString("<conn>")
			mu.Unlock()
		}
	}()
	return ln, func() string {
		ln.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return b.String()
	}
}

func TestLayersBite(t *testing.T) {
	root := testRoot(t)
	for _, lc := range layerCases {
		t.Run(lc.name, func(t *testing.T) {
			t.Parallel()
			bit, saw := lc.run(t, root, lc.level)
			assert.Check(t, bit, "L%d: the layer did not bite: %s", lc.level, saw)
			bit, saw = lc.run(t, root, lc.level-1)
			assert.Check(t, !bit, "L%d: bit one level below its own: %s", lc.level-1, saw)
		})
	}
}

func TestCPULimitAlsoStopsPID1(t *testing.T) {
	root := testRoot(t)
	// Take the wall clock away so that only the CPU limit can stop the loop.
	cpuOnly := func(n int) Policy {
		p := MustPreset(n)
		p.Watchdog, p.Limits.Wall = 20*time.Second, 20*time.Second
		return p
	}
	// Side by side, so that both read the same load: rusage reads under
	// the kernel's limit on a loaded VM (1.6 s for 2 s was seen with
	// both cores busy), so the figures are checked loosely and PID 1 by
	// running on past the soft-limited loop, towards the hard limit.
	loop := func(n int) func() (*Result, error) {
		s, err := NewSession(Options{Policy: cpuOnly(n), Root: root})
		assert.NilError(t, err)
		t.Cleanup(func() { s.Close() })
		return func() (*Result, error) {
			return s.Run(context.Background(), Command{Path: python, Args: []string{"-c", "while True: pass"}})
		}
	}
	var s, p *Result
	var serr, perr error
	var wg sync.WaitGroup
	wg.Add(2)
	soft, pid1 := loop(1), loop(3)
	go func() { defer wg.Done(); s, serr = soft() }()
	go func() { defer wg.Done(); p, perr = pid1() }()
	wg.Wait()
	assert.NilError(t, serr)
	assert.NilError(t, perr)
	assert.Check(t, is.Equal(s.Reason, ReasonCPU), "no namespace")
	assert.Check(t, is.Equal(p.Reason, ReasonCPU), "PID 1")
	assert.Check(t, s.CPU > 1200*time.Millisecond && s.CPU < 2500*time.Millisecond, "soft limit 2 s: stopped after %v of CPU", s.CPU)
	assert.Check(t, p.CPU-s.CPU > 300*time.Millisecond && p.CPU < 3500*time.Millisecond,
		"PID 1 ignores SIGXCPU and runs to the 3 s hard limit: %v of CPU, against %v without a namespace", p.CPU, s.CPU)
	t.Run("PID 1 with the soft limit only is not stopped by it", func(t *testing.T) {
		t.Parallel()
		p := MustPreset(3)
		p.Watchdog, p.Limits.Wall, p.Limits.CPUHard = 5*time.Second, 5*time.Second, 0
		res := runPy(t, root, p, Command{}, "while True: pass")
		assert.Check(t, is.Equal(res.Reason, ReasonTimeout), "CPU %v", res.CPU)
	})
}

func TestTimeoutKillsTheWholeTree(t *testing.T) {
	root := testRoot(t)
	tok := token(t)
	p := MustPreset(1)
	p.Limits.CPU, p.Limits.CPUHard = 0, 0 // the CPU limit would kill the children too
	res := runPy(t, root, p, Command{}, `
import os, time
if os.fork() == 0:
    os.setpgid(0, 0)          # its own process group, same session
    while True: pass
if os.fork() == 0:
    if os.fork() == 0:
        while True: pass      # a grandchild
    while True: pass
while True: pass
`, tok)
	left := alive(tok)
	killTagged(tok)
	assert.Check(t, res.TimedOut)
	assert.Check(t, is.Len(left, 0), "the kill missed part of the tree")
}

func TestWatchdogBoundsL0(t *testing.T) {
	root := testRoot(t)
	p := MustPreset(0)
	p.Watchdog = 500 * time.Millisecond
	res := runPy(t, root, p, Command{}, "import time\ntime.sleep(30)")
	assert.Check(t, res.TimedOut)
	assert.Check(t, is.Equal(res.Reason, ReasonTimeout))
	assert.Check(t, res.Wall < 3*time.Second, "wall %v", res.Wall)
}

func TestStatusAndSignal(t *testing.T) {
	root := testRoot(t)
	res := runPy(t, root, MustPreset(5), Command{}, "import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)")
	assert.Check(t, is.Equal(res.Reason, ReasonExited))
	assert.Check(t, is.Equal(res.ExitCode, 3))
	assert.Check(t, is.Equal(res.Stdout, "out\n"))
	assert.Check(t, is.Equal(res.Stderr, "err\n"))
	assert.Check(t, !res.TimedOut)

	res = runPy(t, root, MustPreset(1), Command{}, "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)")
	assert.Check(t, is.Equal(res.Reason, ReasonSignal))
	assert.Check(t, is.Equal(res.Signal, "SIGTERM"))
	assert.Check(t, is.Equal(res.ExitCode, -1))
}

func TestCancelKillsTheRun(t *testing.T) {
	root := testRoot(t)
	tok := token(t)
	s, err := NewSession(Options{Policy: MustPreset(1), Root: root})
	assert.NilError(t, err)
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		poll.WaitOn(t, func(poll.LogT) poll.Result {
			if len(alive(tok)) > 0 {
				return poll.Success()
			}
			return poll.Continue("not started")
		})
		cancel()
	}()
	res, err := s.Run(ctx, Command{Path: python, Args: []string{"-c", "import time\ntime.sleep(30)", tok}})
	assert.Check(t, is.ErrorIs(err, context.Canceled))
	assert.Check(t, res != nil && res.Reason == ReasonSignal)
	assert.Check(t, is.Len(alive(tok), 0))
}

// TestNothingLeftBehind runs a program that leaves a child behind at every
// level and checks that no tagged process survives once the sweep or the
// namespace is in place. (L0 has neither: there the test cleans up.)
func TestNothingLeftBehind(t *testing.T) {
	root := testRoot(t)
	for _, n := range levelsHere(t, 1) {
		tok := token(t)
		runPy(t, root, MustPreset(n), Command{}, "import os, time\nif os.fork() == 0:\n    time.sleep(30)", tok)
		assert.Check(t, is.Len(alive(tok), 0), "L%d", n)
		killTagged(tok)
	}
	var self []procfs.Proc
	procs, _ := procfs.Scan()
	for _, p := range procfs.Descendants(procs, os.Getpid()) {
		if p.Alive() {
			self = append(self, p)
		}
	}
	assert.Check(t, is.Len(self, 0), "children of the test process still running")
}

// TestNoInheritedDescriptors: a descriptor the harness holds without
// close-on-exec (as one inherited from a shell) must not reach the program.
func TestNoInheritedDescriptors(t *testing.T) {
	root := testRoot(t)
	fd, err := syscall.Open("/dev/null", syscall.O_RDONLY, 0) // no O_CLOEXEC
	assert.NilError(t, err)
	defer syscall.Close(fd)
	for _, n := range levelsHere(t, 1) {
		res := runPy(t, root, MustPreset(n), Command{}, "import os\nprint(sorted(int(f) for f in os.listdir('/proc/self/fd')))")
		assert.Check(t, is.Equal(res.Stdout, "[0, 1, 2, 3]\n"), "L%d: the program holds more than its stdio (3 is listdir's own)", n)
	}
}
