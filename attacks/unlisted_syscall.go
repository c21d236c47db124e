package attacks

import (
	"os"
	"strconv"
	"strings"
	"time"

	"sandboxlab/sandbox/procfs"
)

var unlistedSyscallSpec = &spec{
	id:        "unlisted_syscall",
	escapes:   "a system call no list of the filter names takes effect: a NUMA memory policy set, or a secret-memory descriptor held",
	firstStop: 6,
	new:       func() attack { return &unlistedSyscall{} },
	elsewhere: elsewhere{harmlessAsRoot: true},
}

// unlistedSyscall's evidence is what the host reads of the program's
// processes while they hold what they got: the memory policy in
// /proc/PID/numa_maps, the descriptors in /proc/PID/fd.
type unlistedSyscall struct {
	seen map[string]int // what took effect → the pid seen with it
}

func (u *unlistedSyscall) watch(_ *env, _ time.Time, procs []procfs.Proc) bool {
	for _, p := range procs {
		dir := "/proc/" + strconv.Itoa(p.PID) + "/"
		if maps, err := os.ReadFile(dir + "numa_maps"); err == nil && strings.Contains(string(maps), " prefer:") {
			u.saw("set_mempolicy (a preferred node in numa_maps)", p.PID)
		}
		entries, _ := os.ReadDir(dir + "fd")
		for _, en := range entries {
			if link, _ := os.Readlink(dir + "fd/" + en.Name()); strings.HasPrefix(link, "/secretmem") {
				u.saw("memfd_secret (a secret-memory descriptor)", p.PID)
			}
		}
	}
	return len(u.seen) == 2
}

func (u *unlistedSyscall) saw(what string, pid int) {
	if u.seen == nil {
		u.seen = map[string]int{}
	}
	u.seen[what] = pid
}

func (u *unlistedSyscall) judge(e *env) verdict {
	if len(u.seen) > 0 {
		var took []string
		for what, pid := range u.seen {
			took = append(took, what+" in pid "+strconv.Itoa(pid))
		}
		return escaped("unlisted calls took effect: %s", strings.Join(took, ", "))
	}
	return e.layer(e.policy.Hardened.SyscallFilter, "system-call filter: unlisted calls fail (ENOSYS)",
		"no memory policy or secret-memory descriptor seen; %s", strings.ReplaceAll(strings.TrimSpace(e.res.Stdout), "\n", "; "))
}
