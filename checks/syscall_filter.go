package checks

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
	"sandboxlab/verdict"
)

var syscallFilter = &Check{
	ID:      "syscall_filter",
	Suite:   verdict.Hardening,
	Promise: "the system-call filter refuses the kernel's attack surface, new namespaces and the 32-bit entry point",
	Level:   6,
	Untimed: true,
	Body: func(t *T) {
		// The capabilities are kept (no_new_privs alone is set, as the
		// filter needs): without them the kernel would refuse a new user
		// namespace by itself and hide a filter that lets clone through.
		p := Preset(6, notTimed, func(p *sandbox.Policy) { p.Filesystem.DropCapabilities = false })
		tok := t.tagged()
		s := t.session(p, 0)
		marker := filepath.Join(s.Dir(), "compat-"+tok)
		// The host reads the program's descriptors and namespaces while
		// it holds what it got.
		var mu sync.Mutex
		held := map[string]bool{}
		userNS := map[string]bool{}
		w := evidence.Sample(tok, 10*time.Millisecond, func(_ time.Time, procs []procfs.Proc) {
			for _, pr := range evidence.Programs(procs) {
				dir := "/proc/" + strconv.Itoa(pr.PID) + "/"
				entries, _ := os.ReadDir(dir + "fd")
				ns, _ := os.Readlink(dir + "ns/user")
				mu.Lock()
				for _, en := range entries {
					if link, _ := os.Readlink(dir + "fd/" + en.Name()); strings.HasPrefix(link, "anon_inode:[") {
						held[link] = true
					}
				}
				if ns != "" {
					userNS[ns] = true
				}
				mu.Unlock()
			}
		})
		res := t.python(s, sandbox.Command{}, filterProbe, tok, marker)
		w.Stop()
		out := strings.ReplaceAll(strings.TrimSpace(res.Stdout), "\n", "; ")
		t.Check(strings.Count(res.Stdout, "\n") >= 4, "the probe did not get through its attempts: %s %s", out, lastLine(res.Stderr))
		for _, kind := range []string{"io_uring", "userfaultfd"} {
			t.Check(!held["anon_inode:["+kind+"]"], "the program held a %s descriptor: %s", kind, out)
		}
		t.Check(len(userNS) <= 1, "a process of the run was in a user namespace of its own making: %s", out)
		_, err := os.Stat(marker)
		t.Check(os.IsNotExist(err), "a directory was made through the 32-bit entry point: %s", out)
		// Where the kernel has no 32-bit entry, the call faults before the
		// filter is asked: that part shows nothing of the filter here.
		compat := "no 32-bit mkdir"
		if why := evidence.Lacks(verdict.CompatEntry); why != "" {
			compat = "the 32-bit entry not tested: " + why
		}
		t.Evidence("no io_uring or userfaultfd descriptor, no new user namespace, %s: %s", compat, out)
	},
}

// filterProbe asks for what the filter refuses, holding what it gets for
// the host to see: io_uring and userfaultfd descriptors, a child cloned
// into a new user namespace, and a directory made through the 32-bit
// entry point in a child (argv: tag, the directory's path).
const filterProbe = `
import ctypes, mmap, os, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
def show(what, r):
    print(what, "->", r if r >= 0 else os.strerror(ctypes.get_errno()), flush=True)
params = ctypes.create_string_buffer(120)
show("io_uring_setup", libc.syscall(425, 4, params))
show("userfaultfd", libc.syscall(323, 1))
pid = libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0)  # clone(CLONE_NEWUSER | SIGCHLD)
if pid == 0:
    time.sleep(0.5)
    os._exit(0)
show("clone(CLONE_NEWUSER)", pid)
def compat_mkdir(path):
    m = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x40,
                  prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    m[256:256 + len(path) + 1] = path.encode() + b"\0"
    code = (b"\x53\xb8" + struct.pack("<I", 39) + b"\xbb" + struct.pack("<I", base + 256)
            + b"\xb9" + struct.pack("<I", 0o755) + b"\xcd\x80\x5b\xc3")
    m[0:len(code)] = code
    return ctypes.CFUNCTYPE(ctypes.c_int)(base)()
child = os.fork()
if child == 0:
    compat_mkdir(sys.argv[2])
    os._exit(0)
_, st = os.waitpid(child, 0)
print("32-bit mkdir: child", "killed by signal %d" % os.WTERMSIG(st) if os.WIFSIGNALED(st) else "exited", flush=True)
time.sleep(0.3)
`
