package tool

import (
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/sandbox"
)

// TestStarvedTimeoutWording: a timeout the machine's load made says so and
// suggests the same call again, and still reads as a time-limit stop (the
// words the other reasons' replies hold stay out of it); an ordinary one
// keeps the advice to find a faster method first. sandbox's
// TestStarvedTimeout makes a real starved run.
func TestStarvedTimeoutWording(t *testing.T) {
	p := sandbox.MustPreset(1)
	plain := &sandbox.Result{Reason: sandbox.ReasonTimeout, TimedOut: true}
	starved := &sandbox.Result{Reason: sandbox.ReasonTimeout, TimedOut: true, Starved: true, RunQueueWait: 2460 * time.Millisecond, RunQueueTasks: 2}
	got := headline(p, starved)
	assert.Check(t, is.Contains(got, "stopped at the time limit"))
	assert.Check(t, is.Contains(got, "The machine was busy: the program spent 1.23 s of that time waiting for a processor"))
	assert.Check(t, is.Contains(got, "What to try: the same call again"))
	for _, other := range []string{"CPU limit", "out of memory", "too many processes", "not run"} {
		assert.Check(t, !strings.Contains(got, other), "the starved reply speaks of %q", other)
	}
	assert.Check(t, !strings.Contains(headline(p, plain), "busy"))
	assert.Check(t, is.Contains(headline(p, plain), "What to try: a faster method"))
}
