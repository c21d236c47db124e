package harness

import (
	"context"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// granted reports whether t has been granted.
func granted(t *ticket) bool {
	select {
	case <-t.granted:
		return true
	default:
		return false
	}
}

// TestPoolShares: tasks are admitted while their expected CPU fits the
// cores and the jobs cap; a heavy one that does not fit lets lighter ones
// by; a place given back admits the next; a cancelled wait leaves the
// queue.
func TestPoolShares(t *testing.T) {
	p := newPool(3, 2)
	a, b := p.enqueue(1), p.enqueue(0.9)
	assert.Check(t, granted(a) && granted(b), "two heavy tasks on two cores")
	c := p.enqueue(1)    // does not fit: 1.9 in use
	d := p.enqueue(0.05) // fits, behind it
	assert.Check(t, !granted(c))
	assert.Check(t, granted(d), "a light task goes by a heavy one that waits")
	e := p.enqueue(0.05)
	assert.Check(t, !granted(e), "the jobs cap holds")

	release, err := p.wait(context.Background(), a)
	assert.NilError(t, err)
	release()
	assert.Check(t, granted(c), "the place given back goes to the first that fits")
	release() // twice does nothing
	assert.Check(t, is.Equal(p.running, 3))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err = p.wait(ctx, e)
	assert.Check(t, is.ErrorIs(err, context.DeadlineExceeded))
	assert.Check(t, is.Len(p.queue, 0), "a cancelled wait leaves the queue")

	heavy := p.enqueue(5)
	assert.Check(t, is.Equal(heavy.weight, 1.0), "a task weighs at most a core")
	idle := newPool(4, 2)
	first, second := idle.enqueue(1), idle.enqueue(1)
	assert.Check(t, granted(first) && granted(second), "two cores: two whole tasks")
}

// TestPoolLendsToNeighbours: CPU that others use shrinks the budget (a
// neighbour's busy core is one the probes do not get), and the machine's
// CPU can be read here.
func TestPoolLendsToNeighbours(t *testing.T) {
	p := newPool(4, 2)
	p.external = 1
	a, b := p.enqueue(0.6), p.enqueue(0.6)
	assert.Check(t, granted(a))
	assert.Check(t, !granted(b), "one core lent to a neighbour leaves room for one")
	busy, total, ok := cpuTicks()
	assert.Assert(t, ok, "/proc/stat could not be read")
	assert.Check(t, total > busy && busy > 0)
}

// TestPoolIdleAlone: reruns whose programs run at the lowest priority
// run alone beside each other, and beside nothing else; a plain whole
// task still waits for all of them.
func TestPoolIdleAlone(t *testing.T) {
	p := newPool(8, 2)
	busy := p.enqueue(0.5)
	a := p.enqueueWhole(true)
	assert.Check(t, !granted(a), "it waits for the busy task")
	p.release(busy)
	assert.Check(t, granted(a))
	b := p.enqueueWhole(true)
	assert.Check(t, granted(b), "a second one runs beside the first")
	light := p.enqueue(0.05)
	whole := p.enqueueWhole(false)
	assert.Check(t, !granted(light) && !granted(whole), "nothing else runs beside them")
	p.release(a)
	p.release(b)
	assert.Check(t, granted(light), "the queue goes on once they are done")
	assert.Check(t, !granted(whole))
	p.release(light)
	assert.Check(t, granted(whole))
}
