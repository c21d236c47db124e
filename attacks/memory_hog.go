package attacks

import (
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
)

var memoryHogSpec = &spec{
	id:          "memory_hog",
	escapes:     "allocates 1 GiB (a process's VmPeak reaches it)",
	firstStop:   1,
	new:         func() attack { return &memoryHog{} },
	runsToLimit: true,
	elsewhere:   elsewhere{harmlessAsRoot: true},
}

// memoryHogSize is what the program asks for.
const memoryHogSize = 1 << 30

type memoryHog struct {
	peak    int64 // the highest VmPeak of its processes, in bytes
	peakPID int
}

func (m *memoryHog) watch(_ *env, _ time.Time, procs []procfs.Proc) bool {
	for _, p := range procs {
		if v := evidence.StatusKB(p.PID, "VmPeak") << 10; v > m.peak {
			m.peak, m.peakPID = v, p.PID
		}
	}
	return m.peak >= memoryHogSize
}

func (m *memoryHog) judge(e *env) verdict {
	r := e.res
	if m.peak >= memoryHogSize {
		return escaped("VmPeak of pid %d reached %s", m.peakPID, mib(m.peak))
	}
	seen := "the highest VmPeak sampled was " + mib(m.peak)
	if m.peak == 0 {
		seen = "the program ended before the first sample"
	}
	switch {
	case r.OOM || r.Reason == sandbox.ReasonMemory:
		return stopped("address-space limit", "%s; the result says memory (%s)", seen, lastLine(r.Stderr))
	case e.policy.Limits.AddressSpace > 0:
		return stopped("address-space limit", "%s, under the %s limit; the result does not say memory (%s)",
			seen, mib(e.policy.Limits.AddressSpace), ended(r))
	}
	return stopped("unexpected: "+ended(r), "%s", seen)
}
