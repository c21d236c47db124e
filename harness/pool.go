package harness

import (
	"context"
	"sync"
)

// pool hands out places to run tasks in: at most jobs at once, and at
// most cores of CPU expected in use. A task weighs the share of a CPU its
// probe used in the baseline (its worker's CPU time over its wall time):
// a probe that waits on wall clocks and sleeping programs weighs little,
// and several share a core; a busy loop weighs a whole one. So the cores
// stay busy without being oversubscribed, which the checks' margins and
// the programs' wall clocks need.
//
// Tasks are granted in the order they were queued, and when the first
// one waiting does not fit, lighter ones behind it go first: the queue is
// finite and sorted longest first, so a heavy task waits only until the
// load falls below a core, which it soon does, and the cores never idle
// behind it. A task weighs at most one core: a probe that briefly runs
// two busy loops at once (the CPU-limit check) then oversubscribes a
// little, which the checks' margins are made for, rather than hold the
// queue until a whole machine is free.
type pool struct {
	jobs  int
	cores float64

	mu      sync.Mutex
	running int
	load    float64
	// idleAlone counts the running tickets that are idleAlone.
	idleAlone int
	queue     []*ticket
	// external is the CPU others than the probes use, in cores (see
	// watchNeighbours): the budget lends it to them.
	external float64
}

// ticket is one task's place in the queue.
type ticket struct {
	weight  float64
	granted chan struct{}
	done    bool
	// idleAlone marks a task that runs alone but beside other such tasks
	// (enqueueWhole's idleProgram).
	idleAlone bool
}

func newPool(jobs int, cores float64) *pool {
	return &pool{jobs: max(1, jobs), cores: max(1, cores)}
}

// enqueue queues a task of the given weight (clamped to [0.05, 1]).
func (p *pool) enqueue(weight float64) *ticket {
	t := &ticket{weight: min(max(weight, 0.05), 1), granted: make(chan struct{})}
	p.mu.Lock()
	p.queue = append(p.queue, t)
	p.dispatch()
	p.mu.Unlock()
	return t
}

// enqueueWhole queues a task that runs alone: it fits only when nothing
// else runs. With idleProgram, the task's program runs at the lowest
// priority (an idle-CPU attack cell): it runs beside other such tasks,
// and still beside nothing else. Those programs take no CPU from
// anyone's supervisor, whose timers the second run is there to measure
// on a quiet machine; run one at a time, five reruns of the runaway loop
// left a core idle for the last 20 s of a full run.
func (p *pool) enqueueWhole(idleProgram bool) *ticket {
	t := &ticket{weight: p.cores, granted: make(chan struct{}), idleAlone: idleProgram}
	p.mu.Lock()
	p.queue = append(p.queue, t)
	p.dispatch()
	p.mu.Unlock()
	return t
}

// wait waits until t is granted, and returns the function that gives its
// place back; or ctx's error, having left the queue.
func (p *pool) wait(ctx context.Context, t *ticket) (release func(), err error) {
	select {
	case <-t.granted:
		return func() { p.release(t) }, nil
	case <-ctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-t.granted: // granted meanwhile: give the place back
		p.releaseLocked(t)
	default:
		for i, q := range p.queue {
			if q == t {
				p.queue = append(p.queue[:i], p.queue[i+1:]...)
				break
			}
		}
	}
	return nil, ctx.Err()
}

func (p *pool) release(t *ticket) {
	p.mu.Lock()
	p.releaseLocked(t)
	p.mu.Unlock()
}

func (p *pool) releaseLocked(t *ticket) {
	if t.done {
		return
	}
	t.done = true
	p.running--
	p.load -= t.weight
	if t.idleAlone {
		p.idleAlone--
	}
	p.dispatch()
}

// dispatch grants every queued ticket that fits, in order. The caller
// holds mu.
func (p *pool) dispatch() {
	for i := 0; i < len(p.queue) && p.running < p.jobs; {
		t := p.queue[i]
		if !p.fits(t) {
			i++ // lighter tickets behind it may fit
			continue
		}
		p.queue = append(p.queue[:i], p.queue[i+1:]...)
		p.running++
		p.load += t.weight
		if t.idleAlone {
			p.idleAlone++
		}
		close(t.granted)
	}
}

// fits reports whether t can run now: there is CPU to spare for it, or
// nothing else is running, or t and all that runs are idleAlone.
func (p *pool) fits(t *ticket) bool {
	return p.running == 0 || p.load+t.weight <= p.cores-p.external+1e-9 || (t.idleAlone && p.idleAlone == p.running)
}
