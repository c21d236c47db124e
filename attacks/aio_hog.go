package attacks

import (
	"strings"
	"time"

	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
)

var aioHogSpec = &spec{
	id:        "aio_hog",
	escapes:   "holds asynchronous I/O events, which every process of the machine draws from one count",
	firstStop: 6,
	new:       func() attack { return &aioHog{} },
	elsewhere: elsewhere{harmlessAsRoot: true},
}

// aioHog is seen by its rings: the kernel maps each aio context into its
// owner as "[aio]", so the host needs no word of the program's.
type aioHog struct {
	rings, ringsPID int // the most rings one of its processes held
}

func (a *aioHog) watch(_ *env, _ time.Time, procs []procfs.Proc) bool {
	for _, p := range procs {
		if n := evidence.AIORings(p.PID); n > a.rings {
			a.rings, a.ringsPID = n, p.PID
		}
	}
	return a.rings > 0
}

func (a *aioHog) judge(e *env) verdict {
	if a.rings > 0 {
		return escaped("pid %d held %d aio rings", a.ringsPID, a.rings)
	}
	return e.programLayer(e.policy.Hardened.SyscallFilter, "system-call filter: aio refused",
		"no aio ring in its maps; the program: %s", strings.TrimSpace(e.res.Stdout))
}
