package attacks

import (
	"fmt"
	"strings"
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/procfs"
)

func init() {
	register(attack{
		id:        "fork_bomb",
		escapes:   "over 16 of its processes alive at once for 100 ms (it stops at 40)",
		firstStop: 3,
		watch:     watchForkBomb,
		judge:     judgeForkBomb,
	})
}

const (
	// forkBombCap is the process cap of L3 (DESIGN.md).
	forkBombCap = 16
	// forkBombSustained is how long the count must stay over the cap. The
	// L3 monitor kills within 5–10 ms of the 17th process; one sample
	// over the cap could race it.
	forkBombSustained = 100 * time.Millisecond
)

func watchForkBomb(t *trial, now time.Time, procs []procfs.Proc) bool {
	// Processes already killed (SIGKILL pending) are on their way out:
	// on a loaded machine they may take a while to leave /proc.
	n := 0
	for _, p := range procs {
		if !procfs.Killed(p.PID) {
			n++
		}
	}
	t.maxProcs = max(t.maxProcs, n)
	if n <= forkBombCap {
		t.overSince = time.Time{}
		return false
	}
	if t.overSince.IsZero() {
		t.overSince = now
	}
	t.overFor = max(t.overFor, now.Sub(t.overSince))
	return t.overFor >= forkBombSustained
}

func judgeForkBomb(t *trial) verdict {
	if t.overFor >= forkBombSustained {
		return escaped("over %d processes alive for %d ms (at most %d at once)", forkBombCap, t.overFor.Milliseconds(), t.maxProcs)
	}
	seen := fmt.Sprintf("at most %d processes alive at once, over %d for %d ms", t.maxProcs, forkBombCap, t.overFor.Milliseconds())
	if t.res.Reason != sandbox.ReasonProcesses && strings.Contains(t.res.Stderr, "fork failed") {
		// A limit on the number of processes (RLIMIT_NPROC, a cgroup)
		// refused the fork instead.
		return t.layer(true, "fork refused", "%s; %s", seen, lastLine(t.res.Stderr))
	}
	return t.layer(t.res.Reason == sandbox.ReasonProcesses, "process-cap monitor", "%s", seen)
}
