package attacks

import (
	"fmt"
	"strings"
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/procfs"
)

var forkBombSpec = &spec{
	id:            "fork_bomb",
	escapes:       "over 16 of its processes alive at once for 100 ms (it stops at 40)",
	firstStop:     3,
	new:           func() attack { return &forkBomb{} },
	runsToLimit:   true,
	escapeByClock: true,
	elsewhere:     elsewhere{harmlessAsRoot: true},
}

const (
	// forkBombCap is the process cap of L3 (Processes.Max of its preset).
	forkBombCap = 16
	// forkBombSustained is how long the count must stay over the cap. The
	// L3 monitor kills within 5–10 ms of the 17th process; one sample
	// over the cap could race it.
	forkBombSustained = 100 * time.Millisecond
)

type forkBomb struct {
	maxProcs  int           // most of its processes alive at once
	overSince time.Time     // since when more than the cap have been alive
	overFor   time.Duration // the longest stretch over the cap
}

func (f *forkBomb) watch(_ *env, now time.Time, procs []procfs.Proc) bool {
	// Processes already killed (SIGKILL pending, or their namespace's
	// init) are on their way out: on a loaded machine they may take a
	// while to leave /proc.
	n := len(procfs.Living(procs))
	f.maxProcs = max(f.maxProcs, n)
	if n <= forkBombCap {
		f.overSince = time.Time{}
		return false
	}
	if f.overSince.IsZero() {
		f.overSince = now
	}
	f.overFor = max(f.overFor, now.Sub(f.overSince))
	return f.overFor >= forkBombSustained
}

func (f *forkBomb) judge(e *env) verdict {
	if f.overFor >= forkBombSustained {
		return escaped("over %d processes alive for %d ms (at most %d at once)", forkBombCap, f.overFor.Milliseconds(), f.maxProcs)
	}
	seen := fmt.Sprintf("at most %d processes alive at once, over %d for %d ms", f.maxProcs, forkBombCap, f.overFor.Milliseconds())
	if e.res.Reason != sandbox.ReasonProcesses && strings.Contains(e.res.Stderr, "fork failed") {
		// A limit on the number of processes (RLIMIT_NPROC, a cgroup)
		// refused the fork instead.
		return e.layer(true, "fork refused", "%s; %s", seen, lastLine(e.res.Stderr))
	}
	return e.layer(e.res.Reason == sandbox.ReasonProcesses, "process-cap monitor", "%s", seen)
}
