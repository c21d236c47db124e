package attacks

import (
	"fmt"
	"unicode/utf8"
)

func init() {
	register(attack{
		id:        "output_flood",
		escapes:   "prints 50 MiB and more than 8,000 characters come back, or over 8 MiB is held by the harness",
		firstStop: 1,
		judge:     judgeOutputFlood,
	})
}

const (
	// outputCapChars is the most a stream may return (DESIGN.md).
	outputCapChars = 8000
	// outputHeldMax is the most the harness may hold of a stream; the
	// measure is what it allocated in big objects during the run (cells
	// run one at a time, so that is the run's).
	outputHeldMax = 8 << 20
)

func judgeOutputFlood(t *trial) verdict {
	r := t.res
	chars := utf8.RuneCountInString(r.Stdout)
	seen := fmt.Sprintf("%d characters came back of %d bytes written; the harness allocated %s in big objects during the run (%s in all)",
		chars, r.StdoutBytes, mib(int64(t.allocBig)), mib(int64(t.allocated)))
	switch {
	case chars > outputCapChars:
		return escaped("%s", seen)
	case t.allocBig > outputHeldMax:
		return escaped("%s (held)", seen)
	}
	return t.layer(t.policy.Limits.OutputChars > 0 && t.policy.Limits.OutputHeld > 0, "output cap", "%s", seen)
}
