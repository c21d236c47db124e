package sandbox

import (
	"context"
	"runtime"
	"sync"
)

// A run's wall clock measures the program, not the machine: a hundred
// runs started at once on two cores would otherwise spend their clocks
// queueing for the CPU, and a short program could be stopped at its wall
// limit without having been slow. So a process runs at most a few
// programs at a time; the others wait for a slot (their caller's context
// still applies) before anything is set up and before their clocks start.
// Each running program then has a fair share of the CPU: at L6 its own
// control group with an equal weight.
var slots struct {
	once sync.Once
	max  int
	c    chan struct{}
}

// DefaultMaxRunning is how many programs a process runs at once unless
// SetMaxRunning says otherwise: two per CPU, so that each has at least
// half a CPU when all of them are busy.
func DefaultMaxRunning() int { return 2 * runtime.NumCPU() }

// SetMaxRunning sets how many programs this process runs at once (n < 1:
// DefaultMaxRunning). It takes effect only before the first run; it
// reports whether it did.
func SetMaxRunning(n int) bool {
	set := false
	slots.once.Do(func() {
		if n < 1 {
			n = DefaultMaxRunning()
		}
		slots.max, slots.c, set = n, make(chan struct{}, n), true
	})
	return set
}

// takeSlot waits for a slot to run a program in, or for ctx to end; the
// returned function gives the slot back.
func takeSlot(ctx context.Context) (release func(), err error) {
	SetMaxRunning(0)
	select {
	case slots.c <- struct{}{}:
		return func() { <-slots.c }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
