package checks

import (
	"strings"
	"sync"
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
)

var noCapabilities = &Check{
	ID:      "no_capabilities",
	Promise: "the program holds no capabilities; mounting fails",
	Level:   5,
	Body: func(t *T) {
		tok := t.tagged()
		// The host reads the program's capability sets and the mount
		// tables of its processes while they run: a tmpfs whose source is
		// the token is a mount the program made.
		var mu sync.Mutex
		caps := map[string]string{}
		mounted := false
		seen := false
		w := evidence.Sample(tok, 10*time.Millisecond, func(_ time.Time, procs []procfs.Proc) {
			mu.Lock()
			defer mu.Unlock()
			// Not the sandbox's init, which drops privileges just before
			// it execs the program.
			for _, pr := range evidence.Programs(procs) {
				seen = true
				status, _ := evidence.ReadStatus(pr.PID)
				for _, f := range []string{"CapEff", "CapPrm", "CapBnd", "CapAmb", "NoNewPrivs"} {
					if v := status.Field(f); v != "" && (caps[f] == "" || strings.Trim(v, "0") != "") {
						caps[f] = v
					}
				}
				mounts, _ := evidence.Mountinfo(pr.PID)
				if _, ok := evidence.FindMount(mounts, "tmpfs", tok); ok {
					mounted = true
				}
			}
		})
		res := t.runPython(Preset(5), sandbox.Command{}, mountProgram, tok)
		w.Stop()
		t.Check(seen, "the host never saw the program running")
		for _, f := range []string{"CapEff", "CapPrm", "CapBnd", "CapAmb"} {
			t.Check(strings.Trim(caps[f], "0") == "", "%s is %s", f, caps[f])
		}
		t.Check(caps["NoNewPrivs"] == "1", "no_new_privs is %q", caps["NoNewPrivs"])
		t.Check(!mounted, "the program mounted a tmpfs (%s)", strings.TrimSpace(res.Stdout))
		t.Evidence("CapEff=CapPrm=CapBnd=0, no_new_privs=1; mounting failed, also through a new user namespace")
	},
}

// mountProgram tries to mount a tmpfs named after its token, directly in a
// new mount namespace and through a new user namespace (which would hand
// back capabilities), and holds a successful mount long enough for the
// host to see it.
const mountProgram = `
import ctypes, os, sys, time
tok = sys.argv[1].encode()
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
for flags in (CLONE_NEWNS, CLONE_NEWUSER | CLONE_NEWNS):
    if os.fork() == 0:
        ok = libc.unshare(flags) == 0 and libc.mount(tok, b"/tmp", b"tmpfs", 0, None) == 0
        print(("mounted with %#x" if ok else "refused with %#x: " + os.strerror(ctypes.get_errno())) % flags, flush=True)
        time.sleep(0.4 if ok else 0.2)
        os._exit(0)
    os.wait()
`
