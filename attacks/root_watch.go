package attacks

import (
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/sandbox/procfs"
)

// rootWatch is what the host saw of a program's root directory: whether
// it was the host's / or one of its own (the allowlist root).
type rootWatch struct {
	own, seen bool
}

// look reads the root of the first of procs the host may look at.
func (r *rootWatch) look(procs []procfs.Proc) {
	var host unix.Stat_t
	if r.seen || unix.Stat("/", &host) != nil {
		return
	}
	for _, p := range procs {
		var its unix.Stat_t
		if unix.Stat("/proc/"+strconv.Itoa(p.PID)+"/root/", &its) == nil {
			r.own, r.seen = its.Dev != host.Dev || its.Ino != host.Ino, true
			return
		}
	}
}

// ownRoot says whether the program had a root of its own: as the host
// saw it, or else as the policy asks, with the evidence's note.
func (r *rootWatch) ownRoot(e *env) (bool, string) {
	if r.seen {
		return r.own, ""
	}
	return len(e.policy.Filesystem.Expose) > 0, notSeen
}

// namesOnly: the root only names the layer (see namer).
func (*rootWatch) namesOnly() {}

// watchRoot is the watch of the attacks judged by the program's root.
func (r *rootWatch) watch(_ *env, _ time.Time, procs []procfs.Proc) bool {
	r.look(procs)
	return false
}
