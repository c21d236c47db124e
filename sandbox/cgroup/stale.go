package cgroup

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"sandboxlab/sandbox/procfs"
)

// A caller killed by SIGKILL cannot remove its runs' groups. Its runs die
// with it (the init has a parent-death signal, and the end of a PID
// namespace kills the rest), but their directories stay. Each group's
// name holds its owner's pid and start time (Owner), and the first group
// a process makes below a parent sweeps the empty groups there whose
// owner is gone (SweepStale).

// Owner is the name part that identifies the calling process for good:
// its pid and its start time, which a reused pid does not share.
func Owner() string {
	me, err := procfs.Stat(os.Getpid())
	if err != nil {
		return strconv.Itoa(os.Getpid()) + "-0"
	}
	return strconv.Itoa(me.PID) + "-" + strconv.FormatUint(me.Start, 10)
}

// ownerGone reports whether the owner named at the start of rest
// ("<pid>-<start>-...") has ended. A name it cannot read, or an owner
// that may still be running, is not gone: the sweep errs on the side of
// leaving a group.
func ownerGone(rest string) bool {
	f := strings.SplitN(rest, "-", 3)
	if len(f) < 2 {
		return false
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 || start == 0 {
		return false
	}
	p, err := procfs.Stat(pid)
	if err != nil {
		return os.IsNotExist(err)
	}
	return p.Start != start || !p.Alive()
}

var swept sync.Map // parent directory → struct{}: swept by this process

// SweepStale removes, once per process and parent, the groups in parent
// named prefix+Owner()+"-..." of an owner that has ended, if they hold no
// process. A group that still holds one is left alone: its owner may be a
// caller in another PID namespace whose pid this one cannot see.
func SweepStale(parent, prefix string) {
	if _, done := swept.LoadOrStore(parent, struct{}{}); !done {
		sweep(parent, prefix)
	}
}

// sweep is SweepStale's work, done every time it is called.
func sweep(parent, prefix string) {
	dirs, _ := filepath.Glob(filepath.Join(parent, prefix+"*"))
	for _, dir := range dirs {
		if !ownerGone(strings.TrimPrefix(filepath.Base(dir), prefix)) {
			continue
		}
		if pids, err := readPIDs(dir); err != nil || len(pids) > 0 {
			continue
		}
		// Empty: rmdir succeeds or fails (EBUSY, a race with a fork),
		// and either way nothing is killed.
		removeDir(dir)
	}
}

// runPrefix starts the name of every run's group.
const runPrefix = "sandboxlab-run-"
