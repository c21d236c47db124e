package checks

import (
	"strconv"
	"strings"

	"gotest.tools/v3/assert"

	"sandboxlab/sandbox"
)

var memoryLimit = &Check{
	ID:      "memory_limit",
	Promise: "allocating past 256 MB fails and the result says memory",
	Level:   1,
	Body: func(t *T) {
		p := preset(1)
		tok := t.tagged()
		// The host watches the program's peak address space while it
		// runs; the program lingers a moment after its attempt so that
		// a successful allocation cannot hide between two samples.
		stop := peakOf(tok, func(pid int) int {
			kb, _ := strconv.Atoi(strings.TrimSuffix(statusField(pid, "VmPeak"), " kB"))
			return kb
		})
		res := t.runPython(p, sandbox.Command{Dir: t.ownedDir("app")}, `
import time
try:
    b = bytearray(512 << 20)
finally:
    time.sleep(0.3)
`, tok)
		peakMiB := stop() >> 10
		assert.Check(t, peakMiB > 0, "the host never saw the program running")
		assert.Check(t, int64(peakMiB)<<20 <= p.Limits.AddressSpace, "the program reached %d MiB of address space; the limit is %d MiB", peakMiB, p.Limits.AddressSpace>>20)
		assert.Check(t, res.OOM, "the result does not flag memory (oom=false; reason %s, exit %d)", res.Reason, res.ExitCode)
		assert.Check(t, res.Reason == sandbox.ReasonMemory, "the result says %s, not memory", res.Reason)
		t.Evidence("512 MiB refused: peak address space %d MiB, result oom=%v reason=%s", peakMiB, res.OOM, res.Reason)
	},
}
