package cgroup

import (
	"sync"

	"sandboxlab/sandbox/procfs"
)

// A caller killed by SIGKILL cannot remove its runs' groups. Its runs die
// with it (the init has a parent-death signal, and the end of a PID
// namespace kills the rest), but their directories stay. Each group's
// name holds its owner (procfs.Owner), and the first group a process
// makes below a parent sweeps the empty groups there whose owner is gone
// (SweepStale).

var swept sync.Map // parent directory → struct{}: swept by this process

// SweepStale removes, once per process and parent, the groups in parent
// named prefix+procfs.Owner()+"-..." of an owner that has ended, if they hold no
// process. A group that still holds one is left alone: its owner may be a
// caller in another PID namespace whose pid this one cannot see.
func SweepStale(parent, prefix string) {
	if _, done := swept.LoadOrStore(parent, struct{}{}); !done {
		sweep(parent, prefix)
	}
}

// sweep is SweepStale's work, done every time it is called. A group may
// hold the groups of runs made below it (a harness's jail holds its
// probes' run groups), which would keep it from being removed: those of
// ended owners are swept first, by the same rule.
func sweep(parent, prefix string) {
	for _, dir := range procfs.Orphaned(parent, prefix) {
		sweep(dir, RunPrefix)
		if pids, err := readPIDs(dir); err != nil || len(pids) > 0 {
			continue
		}
		// Empty: rmdir succeeds or fails (EBUSY, a race with a fork),
		// and either way nothing is killed.
		removeDir(dir)
	}
}

// RunPrefix starts the name of every run's group.
const RunPrefix = "sandboxlab-run-"
