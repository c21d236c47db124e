package harness

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// The pool's budget assumes the machine is its own. On a shared one (a CI
// runner with neighbours, a developer's laptop) another process's busy
// loop takes a core that the pool would hand to a probe, and the probes'
// wall clocks (1.5 s at L1 and up) then measure the machine's load
// instead of the sandbox. So the pool watches the machine's CPU and
// lends the neighbours what they use beyond its own probes' expected
// load: a neighbour that keeps a core busy shrinks the budget by a core,
// and the probes keep the share of the CPU they were measured with.

// neighbourEvery is how often the machine's CPU is read; neighbourWeight
// how much a new reading counts against the ones before (an average over
// about a second, so that a probe's burst is not taken for a neighbour).
// neighbourFloor is the use by others below which the machine counts as
// the pool's own (the harness's own bookkeeping, the kernel's threads).
const (
	neighbourEvery  = 250 * time.Millisecond
	neighbourWeight = 0.3
	neighbourFloor  = 0.25
)

// watchNeighbours updates p's view of the CPU used by others than its
// probes until ctx is done.
func (p *pool) watchNeighbours(ctx context.Context) {
	cpus := float64(runtime.NumCPU())
	busy0, total0, ok := cpuTicks()
	if !ok {
		return // no /proc/stat: the budget stays the machine's
	}
	tick := time.NewTicker(neighbourEvery)
	defer tick.Stop()
	avg := 0.0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		busy, total, ok := cpuTicks()
		if !ok || total <= total0 {
			continue
		}
		used := float64(busy-busy0) / float64(total-total0) * cpus
		busy0, total0 = busy, total
		p.mu.Lock()
		others := max(0, used-p.load)
		avg = neighbourWeight*others + (1-neighbourWeight)*avg
		lend := avg
		if avg > neighbourFloor {
			// With neighbours, no margin past the cores either: the
			// probes' bursts would come out of what is left of a core.
			lend += max(0, p.cores-cpus)
		}
		// Never lend more than leaves one core for the probes.
		p.external = min(lend, max(0, p.cores-1))
		p.dispatch()
		p.mu.Unlock()
	}
}

// cpuTicks reads the machine's busy and total CPU time from /proc/stat.
// Nice time is not busy: a program at low priority (the runaway loop,
// someone's build at nice 19) yields to the probes.
func cpuTicks() (busy, total uint64, ok bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, 0, false
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0, 0, false
	}
	var v [8]uint64 // user nice system idle iowait irq softirq steal
	for i := range v {
		n, err := strconv.ParseUint(fields[i+1], 10, 64)
		if err != nil {
			return 0, 0, false
		}
		v[i] = n
		total += n
	}
	busy = v[0] + v[2] + v[5] + v[6] + v[7]
	return busy, total, true
}
