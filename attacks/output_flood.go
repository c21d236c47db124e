package attacks

import (
	"fmt"
	"runtime"
	"unicode/utf8"
)

var outputFloodSpec = &spec{
	id:          "output_flood",
	escapes:     "prints 50 MiB and more than 8,000 characters come back, or over 8 MiB is held by the harness",
	firstStop:   1,
	new:         func() attack { return &outputFlood{} },
	runsToLimit: true,
	elsewhere:   elsewhere{harmlessAsRoot: true},
}

const (
	// outputCapChars is the most a stream may return (Limits.OutputChars of L1).
	outputCapChars = 8000
	// outputHeldMax is the most the harness may hold of a stream; the
	// measure is what it allocated in big objects during the run (cells
	// run one at a time, so that is the run's).
	outputHeldMax = 8 << 20
)

type outputFlood struct {
	before    runtime.MemStats
	allocated uint64 // bytes the harness allocated during the run
	allocBig  uint64 // of those, bytes in objects too big for MemStats' size classes
}

func (o *outputFlood) beforeRun(*env) { runtime.ReadMemStats(&o.before) }

func (o *outputFlood) afterRun(*env) {
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	o.allocated = after.TotalAlloc - o.before.TotalAlloc
	o.allocBig = bigAllocs(&after) - bigAllocs(&o.before)
}

// bigAllocs returns the bytes ever allocated in objects larger than the
// size classes MemStats lists (about 19 KiB and up): where a stream would
// hold output. The sandbox's process monitor allocates a little on every
// walk of /proc, in small objects only; leaving those out keeps a slow run
// at L3 from looking like held output.
func bigAllocs(m *runtime.MemStats) uint64 {
	small := uint64(0)
	for _, c := range m.BySize {
		small += uint64(c.Size) * c.Mallocs
	}
	return m.TotalAlloc - small
}

func (o *outputFlood) judge(e *env) verdict {
	r := e.res
	chars := utf8.RuneCountInString(r.Stdout)
	seen := fmt.Sprintf("%d characters came back of %d bytes written; the harness allocated %s in big objects during the run (%s in all)",
		chars, r.StdoutBytes, mib(int64(o.allocBig)), mib(int64(o.allocated)))
	switch {
	case chars > outputCapChars:
		return escaped("%s", seen)
	case o.allocBig > outputHeldMax:
		return escaped("%s (held)", seen)
	}
	return e.layer(e.policy.Limits.OutputChars > 0 && e.policy.Limits.OutputHeld > 0, "output cap", "%s", seen)
}
