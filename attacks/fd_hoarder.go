package attacks

import (
	"time"

	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
)

var fdHoarderSpec = &spec{
	id:          "fd_hoarder",
	escapes:     "holds over 64 files open",
	firstStop:   1,
	new:         func() attack { return &fdHoarder{} },
	runsToLimit: true,
	elsewhere:   elsewhere{harmlessAsRoot: true},
}

// fdHoarderMax is the most descriptors a process may hold (the L1 limit).
const fdHoarderMax = 64

type fdHoarder struct {
	maxFDs    int // the most descriptors one of its processes held
	maxFDsPID int
}

func (f *fdHoarder) watch(_ *env, _ time.Time, procs []procfs.Proc) bool {
	for _, p := range procs {
		if n := evidence.OpenFDs(p.PID); n > f.maxFDs {
			f.maxFDs, f.maxFDsPID = n, p.PID
		}
	}
	return f.maxFDs > fdHoarderMax
}

func (f *fdHoarder) judge(e *env) verdict {
	if f.maxFDs > fdHoarderMax {
		return escaped("pid %d held %d descriptors open", f.maxFDsPID, f.maxFDs)
	}
	return e.layer(e.policy.Limits.OpenFiles > 0, "open-files limit", "at most %d descriptors open (%s)", f.maxFDs, lastLine(e.res.Stderr))
}
