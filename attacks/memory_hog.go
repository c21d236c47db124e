package attacks

import (
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
)

func init() {
	register(attack{
		id:        "memory_hog",
		escapes:   "allocates 1 GiB (a process's VmPeak reaches it)",
		firstStop: 1,
		watch:     watchMemoryHog,
		judge:     judgeMemoryHog,
	})
}

// memoryHogSize is what the program asks for.
const memoryHogSize = 1 << 30

func watchMemoryHog(t *trial, _ time.Time, procs []procfs.Proc) bool {
	for _, p := range procs {
		if v := evidence.StatusKB(p.PID, "VmPeak") << 10; v > t.peak {
			t.peak, t.peakPID = v, p.PID
		}
	}
	return t.peak >= memoryHogSize
}

func judgeMemoryHog(t *trial) verdict {
	r := t.res
	if t.peak >= memoryHogSize {
		return escaped("VmPeak of pid %d reached %s", t.peakPID, mib(t.peak))
	}
	seen := "the highest VmPeak sampled was " + mib(t.peak)
	if t.peak == 0 {
		seen = "the program ended before the first sample"
	}
	switch {
	case r.OOM || r.Reason == sandbox.ReasonMemory:
		return stopped("address-space limit", "%s; the result says memory (%s)", seen, lastLine(r.Stderr))
	case t.policy.Limits.AddressSpace > 0:
		return stopped("address-space limit", "%s, under the %s limit; the result does not say memory (%s)",
			seen, mib(t.policy.Limits.AddressSpace), ended(r))
	}
	return stopped("unexpected: "+ended(r), "%s", seen)
}
