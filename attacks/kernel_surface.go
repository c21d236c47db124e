package attacks

import (
	"os"
	"strconv"
	"strings"
	"time"

	"sandboxlab/sandbox/procfs"
)

var kernelSurfaceSpec = &spec{
	id:        "kernel_surface",
	escapes:   "holds an io_uring or a userfaultfd descriptor, interfaces where kernel exploits live",
	firstStop: 6,
	new:       func() attack { return &kernelSurface{} },
	elsewhere: elsewhere{harmlessAsRoot: true},
}

// kernelSurface's evidence is the program's descriptors as the host's
// /proc shows them: anon_inode:[io_uring], anon_inode:[userfaultfd].
type kernelSurface struct {
	held map[string]int // interface → the pid seen holding it
}

func (k *kernelSurface) watch(_ *env, _ time.Time, procs []procfs.Proc) bool {
	for _, p := range procs {
		dir := "/proc/" + strconv.Itoa(p.PID) + "/fd/"
		entries, _ := os.ReadDir(dir)
		for _, en := range entries {
			link, _ := os.Readlink(dir + en.Name())
			for _, kind := range []string{"io_uring", "userfaultfd"} {
				if link == "anon_inode:["+kind+"]" {
					if k.held == nil {
						k.held = map[string]int{}
					}
					k.held[kind] = p.PID
				}
			}
		}
	}
	return len(k.held) == 2
}

func (k *kernelSurface) judge(e *env) verdict {
	if len(k.held) > 0 {
		var kinds []string
		for kind, pid := range k.held {
			kinds = append(kinds, kind+" (pid "+strconv.Itoa(pid)+")")
		}
		return escaped("the program held %s", strings.Join(kinds, ", "))
	}
	return e.layer(e.policy.Hardened.SyscallFilter, "system-call filter", "no such descriptor seen; %s",
		strings.ReplaceAll(strings.TrimSpace(e.res.Stdout), "\n", "; "))
}
