package checks

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
	"sandboxlab/verdict"
)

var unlistedSyscalls = &Check{
	ID:      "unlisted_syscalls",
	Suite:   verdict.Hardening,
	Promise: "a system call the filter lists nowhere fails with ENOSYS, one that works unprivileged included",
	Level:   6,
	Untimed: true,
	Body: func(t *T) {
		tok := t.tagged()
		s := t.session(Preset(6, notTimed), 0)
		// What the calls leave is the host's to see: a memory policy in
		// /proc/PID/numa_maps, a secret-memory descriptor in /proc/PID/fd.
		var mu sync.Mutex
		var seen []string
		w := evidence.Sample(tok, 10*time.Millisecond, func(_ time.Time, procs []procfs.Proc) {
			for _, p := range evidence.Programs(procs) {
				if found := unlistedTraces(p.PID); len(found) > 0 {
					mu.Lock()
					seen = append(seen, found...)
					mu.Unlock()
				}
			}
		})
		res := t.python(s, sandbox.Command{}, unlistedProbe, tok)
		w.Stop()
		out := strings.ReplaceAll(strings.TrimSpace(res.Stdout), "\n", "; ")
		t.Check(strings.Count(res.Stdout, "\n") >= 4, "the probe did not get through its calls: %s %s", out, lastLine(res.Stderr))
		mu.Lock()
		defer mu.Unlock()
		t.Check(len(seen) == 0, "unlisted calls took effect: the host saw %s: %s", strings.Join(seen, ", "), out)
		t.Evidence("the host saw no memory policy and no secret-memory descriptor; the program: %s", out)
	},
}

// unlistedTraces returns what of set_mempolicy and memfd_secret the host
// sees in process pid.
func unlistedTraces(pid int) []string {
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	var found []string
	if maps, err := os.ReadFile(dir + "numa_maps"); err == nil {
		for _, policy := range []string{"prefer:", "bind:", "interleave:"} {
			if strings.Contains(string(maps), " "+policy) {
				found = append(found, "a "+strings.TrimSuffix(policy, ":")+" memory policy in numa_maps (set_mempolicy)")
				break
			}
		}
	}
	entries, _ := os.ReadDir(dir + "fd")
	for _, en := range entries {
		if link, _ := os.Readlink(dir + "fd/" + en.Name()); strings.HasPrefix(link, "/secretmem") {
			found = append(found, "a secret-memory descriptor (memfd_secret)")
			break
		}
	}
	return found
}

// unlistedProbe makes calls that no list of the filter names and that
// work for an unprivileged program without it: get_robust_list and
// get_mempolicy, whose answers only it sees, then set_mempolicy and
// memfd_secret, whose effects the host sees while it holds them.
const unlistedProbe = `
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
def show(what, r):
    print(what, "->", r if r >= 0 else os.strerror(ctypes.get_errno()), flush=True)
head, size = ctypes.c_void_p(), ctypes.c_size_t()
show("get_robust_list", libc.syscall(274, 0, ctypes.byref(head), ctypes.byref(size)))
show("get_mempolicy", libc.syscall(239, None, None, 0, None, 0))
mask = ctypes.c_ulong(1)
show("set_mempolicy(MPOL_PREFERRED)", libc.syscall(238, 1, ctypes.byref(mask), 64))
show("memfd_secret", libc.syscall(447, 0))
time.sleep(0.3)
`
