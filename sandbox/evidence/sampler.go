package evidence

import (
	"slices"
	"sync"
	"time"

	"sandboxlab/sandbox/procfs"
)

// Sampler looks at the host's processes tagged with one token at a fixed
// interval while a run goes on.
type Sampler struct {
	quit chan struct{}
	done chan struct{}
	once sync.Once
}

// Sample calls fn with the time and the live processes tagged with tag
// (procfs.WithArg: the program, whatever it forked wherever it went, and
// the sandbox's init until it execs the program) at once and then every
// interval, until the returned sampler is stopped. fn runs on a goroutine
// of the sampler's, one call at a time.
//
// Each look reads the command lines of the processes started since
// Sample was called (procfs.Newcomers), and of those it found tagged
// then, not of every process on the host: on a busy machine a full pass
// reads hundreds, and a mutation run's workers spent more CPU on their
// samplers than their programs spent on the attacks. A process that was
// there untagged when Sample was called and takes the tag later (a fork
// of the program's init that execs after) is not found: start the
// sampler before the run.
func Sample(tag string, every time.Duration, fn func(now time.Time, procs []procfs.Proc)) *Sampler {
	return SampleUntil(tag, every, func(now time.Time, procs []procfs.Proc) bool {
		fn(now, procs)
		return false
	})
}

// SampleUntil is Sample that also ends once fn returns true: what it
// looked for is settled (an escape is certain) and more samples would
// only cost time.
func SampleUntil(tag string, every time.Duration, fn func(now time.Time, procs []procfs.Proc) bool) *Sampler {
	return sampleUntil(tagged{arg: tag}, every, fn)
}

// SampleUntilPrefix is SampleUntil for the processes with an argument
// that begins with prefix: a program that cannot be given an argument of
// its own (code a tool runs as python3 -c CODE) carries its tag at the
// start of its code.
func SampleUntilPrefix(prefix string, every time.Duration, fn func(now time.Time, procs []procfs.Proc) bool) *Sampler {
	return sampleUntil(tagged{arg: prefix, prefix: true}, every, fn)
}

// tagged says how a sampler's processes carry their tag: as a whole
// argument, or at the start of one.
type tagged struct {
	arg    string
	prefix bool
}

func (t tagged) all() []procfs.Proc {
	if t.prefix {
		return procfs.WithArgPrefix(t.arg)
	}
	return procfs.WithArg(t.arg)
}

func (t tagged) among(pids []int) []procfs.Proc {
	if t.prefix {
		return procfs.WithArgPrefixAmong(pids, t.arg)
	}
	return procfs.WithArgAmong(pids, t.arg)
}

func (t tagged) since(n *procfs.Newcomers) []procfs.Proc {
	if t.prefix {
		return n.WithArgPrefix(t.arg)
	}
	return n.WithArg(t.arg)
}

func sampleUntil(tag tagged, every time.Duration, fn func(now time.Time, procs []procfs.Proc) bool) *Sampler {
	s := &Sampler{quit: make(chan struct{}), done: make(chan struct{})}
	// Listed here, not on the goroutine: by the time it first looks, the
	// run may have forked the init, which shows the tag only once it
	// execs.
	since := procfs.NewNewcomers()
	var there []int // tagged already
	for _, p := range tag.all() {
		there = append(there, p.PID)
	}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			procs := tag.since(since)
			if len(there) > 0 {
				// One born between the listing and the scan is in both.
				procs = slices.DeleteFunc(procs, func(p procfs.Proc) bool { return slices.Contains(there, p.PID) })
				procs = append(tag.among(there), procs...)
			}
			if fn(time.Now(), procs) {
				return
			}
			select {
			case <-s.quit:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// Stop ends sampling and waits for the sample in progress: what fn
// recorded is safe to read once it returns. Calling it again does nothing.
func (s *Sampler) Stop() {
	s.once.Do(func() { close(s.quit) })
	<-s.done
}

// Peak keeps the highest value seen while a sampler runs.
type Peak struct {
	s     *Sampler
	mu    sync.Mutex
	value int64
	pid   int
}

// PeakOf samples the program's processes (Programs of those tagged with
// tag) every interval and keeps the highest value measure gives for one
// of them, and that process's pid.
func PeakOf(tag string, every time.Duration, measure func(pid int) int64) *Peak {
	p := &Peak{}
	p.s = Sample(tag, every, func(_ time.Time, procs []procfs.Proc) {
		for _, pr := range Programs(procs) {
			p.see(measure(pr.PID), pr.PID)
		}
	})
	return p
}

// PeakCount samples the program's processes (Programs of those tagged
// with tag) every interval and keeps the most seen alive at once.
func PeakCount(tag string, every time.Duration) *Peak {
	p := &Peak{}
	p.s = Sample(tag, every, func(_ time.Time, procs []procfs.Proc) {
		p.see(int64(len(Programs(procs))), 0)
	})
	return p
}

func (p *Peak) see(v int64, pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v > p.value {
		p.value, p.pid = v, pid
	}
}

// Stop stops sampling and returns the peak and the pid it was seen in
// (PeakCount: 0). A peak of 0 means the host never saw the program.
func (p *Peak) Stop() (value int64, pid int) {
	p.s.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.value, p.pid
}
