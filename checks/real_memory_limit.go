package checks

import (
	"strings"

	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

var realMemoryLimit = &Check{
	ID:      "real_memory_limit",
	Suite:   verdict.Hardening,
	Promise: "the memory limit is on real memory: reserving 1 GiB and touching 10 MiB runs; touching 300 MiB stops with reason memory, the OOM flag from the kernel",
	Level:   6,
	Untimed: true,
	// The memory limits, the kill of the stopped run, the clocks and the
	// init that reports the end.
	Touches: []string{"cgroup_memory", "address_space", "reaper", "tree_kill", "wall_clock", "cpu_limit", "pid_namespace"},
	Body: func(t *T) {
		p := Preset(6)
		// The promise is about memory, not time: on a loaded machine
		// Python's start and 10 MiB of page faults can outlast the preset's
		// 1.5 s wall clock (seen at load 11), so both runs are not timed.
		light := t.runPython(Preset(6, notTimed), sandbox.Command{}, `
import mmap
m = mmap.mmap(-1, 1 << 30)
m[0:10 << 20] = b"x" * (10 << 20)
print("reserved 1 GiB, touched 10 MiB")
`)
		t.Check(light.Reason == sandbox.ReasonExited && light.ExitCode == 0 && !light.OOM,
			"reserving 1 GiB and touching 10 MiB ended with %s (status %d, oom %v; %s): %s", light.Reason, light.ExitCode, light.OOM, spent(light), lastLine(light.Stderr))
		// Filling 300 MiB into a 256 MiB group makes the kernel reclaim
		// before it kills, which on a loaded machine can outlast the 1.5 s
		// wall clock: that layer is taken away from this run, as a check
		// takes away what would hide the one it tests. The memory is
		// touched in one mmap(MAP_POPULATE), inside the kernel: filled from
		// Python, each step went back to an interpreter whose own pages the
		// reclaim had just taken, and with both cores busy the run
		// thrashed past even 10 s (mutate --repeat 5 saw it in 23 of 135
		// runs).
		heavy := t.runPython(Preset(6, notTimed), sandbox.Command{}, `
import mmap
block = mmap.mmap(-1, 300 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE)
print("touched", len(block))
`)
		limit := p.Hardened.Cgroup.Memory
		t.Check(heavy.Reason == sandbox.ReasonMemory, "touching 300 MiB ended with %s (%s; %s), not memory", heavy.Reason, heavy.Signal, spent(heavy))
		t.Check(heavy.OOM, "the OOM flag is not set")
		t.Check(!strings.Contains(heavy.Stderr, "MemoryError"), "the program saw a MemoryError: the limit is not the kernel's on real memory")
		t.Check(heavy.MemoryPeak > 0 && heavy.MemoryPeak <= limit+(1<<20), "the kernel counted a peak of %d bytes, the limit is %d", heavy.MemoryPeak, limit)
		t.Evidence("1 GiB reserved and 10 MiB touched ran (peak %.1f MiB); 300 MiB stopped with %s by %s, OOM from the kernel, peak %.1f MiB",
			float64(light.MemoryPeak)/(1<<20), heavy.Reason, heavy.Signal, float64(heavy.MemoryPeak)/(1<<20))
	},
}
