package attacks

import (
	"time"

	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
)

func init() {
	register(attack{
		id:        "fd_hoarder",
		escapes:   "holds over 64 files open",
		firstStop: 1,
		watch:     watchFDHoarder,
		judge:     judgeFDHoarder,
	})
}

// fdHoarderMax is the most descriptors a process may hold (the L1 limit).
const fdHoarderMax = 64

func watchFDHoarder(t *trial, _ time.Time, procs []procfs.Proc) bool {
	for _, p := range procs {
		if n := evidence.OpenFDs(p.PID); n > t.maxFDs {
			t.maxFDs, t.maxFDsPID = n, p.PID
		}
	}
	return t.maxFDs > fdHoarderMax
}

func judgeFDHoarder(t *trial) verdict {
	if t.maxFDs > fdHoarderMax {
		return escaped("pid %d held %d descriptors open", t.maxFDsPID, t.maxFDs)
	}
	return t.layer(t.policy.Limits.OpenFiles > 0, "open-files limit", "at most %d descriptors open (%s)", t.maxFDs, lastLine(t.res.Stderr))
}
