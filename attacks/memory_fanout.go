package attacks

import (
	"time"

	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
)

var memoryFanoutSpec = &spec{
	id:          "memory_fanout",
	escapes:     "its processes together hold over 256 MiB of real memory at once (320 with shared pages), each under a per-process limit",
	firstStop:   6,
	new:         func() attack { return &memoryFanout{} },
	runsToLimit: true,
	elsewhere:   elsewhere{harmlessAsRoot: true},
	// Processes that allocate and touch memory: stopped by a memory limit,
	// the process caps, the clocks and the kills, nothing else.
	touches: []string{"cgroup_memory", "cgroup_pids", "process_monitor", "address_space", "reaper", "tree_kill", "sweep", "wall_clock", "cpu_limit", "pid_namespace"},
}

// runMemory is the real memory a run may use at the levels with limits,
// and countedTwice the slack for the interpreter's pages that forked
// processes share until one writes them, which a sum over processes
// counts once per process.
const (
	runMemory    = 256 << 20
	countedTwice = 64 << 20
)

// memoryFanout's evidence is the sum of the private resident memory
// (RssAnon) of its processes, sampled by the host while they hold it.
// One look reads the processes one after another, so a process read
// holding its memory and then killed by a memory limit, its memory going
// to the next process read, would count twice; so each process counts
// with the least of two looks in a row. Its program's processes each
// take their memory once and keep it until they end, so a process that
// held m at both looks held it in between, at the moment the other
// processes were read: what the sum counts was held at once.
type memoryFanout struct {
	peak int64
	last map[int]int64 // RssAnon by PID at the previous look
}

// setup pushes the wall clock back (unhurried): at 1.5 s a loaded
// machine could stop the four processes before they overlap, a stop no
// memory limit made. The program ends itself a second after its
// processes hold their memory.
func (m *memoryFanout) setup(e *env) error {
	e.unhurried()
	return nil
}

func (m *memoryFanout) watch(_ *env, _ time.Time, procs []procfs.Proc) bool {
	now := make(map[int]int64, len(procs))
	for _, p := range procs {
		now[p.PID] = evidence.StatusKB(p.PID, "RssAnon") << 10
	}
	m.peak = max(m.peak, heldAtOnce(m.last, now))
	m.last = now
	return m.peak > runMemory+countedTwice
}

// heldAtOnce sums, over the processes of two looks in a row, the least
// memory each held at the two.
func heldAtOnce(before, now map[int]int64) int64 {
	var sum int64
	for pid, n := range now {
		if b, ok := before[pid]; ok {
			sum += min(b, n)
		}
	}
	return sum
}

func (m *memoryFanout) judge(e *env) verdict {
	if m.peak > runMemory+countedTwice {
		return escaped("its processes held %s of real memory at once", mib(m.peak))
	}
	mechanism := "memory control group"
	if e.res.OOM {
		mechanism += ": OOM kill"
	}
	return e.layer(e.policy.Hardened.Cgroup.Memory > 0, mechanism, "at most %s held at once (memory peak %s by the kernel's count)",
		mib(m.peak), mib(e.res.MemoryPeak))
}
