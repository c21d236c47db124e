package checks

import (
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
)

var memoryLimit = &Check{
	ID:      "memory_limit",
	Promise: "allocating past 256 MB fails and the result says memory",
	Level:   1,
	Body: func(t *T) {
		p := Preset(1)
		tok := t.tagged()
		// The host watches the program's peak address space while it
		// runs; the program lingers a moment after its attempt so that
		// a successful allocation cannot hide between two samples.
		peak := evidence.PeakOf(tok, 10*time.Millisecond, func(pid int) int64 { return evidence.StatusKB(pid, "VmPeak") })
		res := t.runPython(p, sandbox.Command{Dir: t.ownedDir("app")}, `
import time
try:
    b = bytearray(512 << 20)
finally:
    time.sleep(0.3)
`, tok)
		peakKB, _ := peak.Stop()
		peakMiB := peakKB >> 10
		t.Check(peakMiB > 0, "the host never saw the program running")
		t.Check(peakMiB<<20 <= p.Limits.AddressSpace, "the program reached %d MiB of address space; the limit is %d MiB", peakMiB, p.Limits.AddressSpace>>20)
		t.Check(res.OOM, "the result does not flag memory (oom=false; reason %s, exit %d)", res.Reason, res.ExitCode)
		t.Check(res.Reason == sandbox.ReasonMemory, "the result says %s, not memory", res.Reason)
		t.Evidence("512 MiB refused: peak address space %d MiB, result oom=%v reason=%s", peakMiB, res.OOM, res.Reason)
	},
}
