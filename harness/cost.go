package harness

import (
	"sync"
	"syscall"
	"time"

	"sandboxlab/report"
	"sandboxlab/sandbox"
)

// ProbeCost is where one worker's time went, by kind of process, as the
// worker measured it: the split the report's timing section adds up.
// Times are in microseconds; a probe's share is often under a
// millisecond.
type ProbeCost struct {
	// StartCPU is the worker's own CPU time when its main began: the
	// exec, the Go runtime and the package initialisers.
	StartCPU int64 `json:"start_cpu_us"`
	// WorkerCPU is the worker's own CPU time after that: fixtures,
	// judges and the samplers they poll with, and supervising the runs.
	WorkerCPU int64 `json:"worker_cpu_us"`
	// ChildCPU is the CPU time of the processes the worker waited for:
	// the runs' inits and programs, and any helper or CLI a check starts.
	ChildCPU int64 `json:"child_cpu_us"`
	// ProgramCPU and ProgramWall are the sums, over the runs the
	// worker's sessions made, of each program's CPU and wall time
	// (sandbox.Result.CPU and Wall); InitSetup of the init's exec to the
	// program's exec (sandbox.Result.InitSetup).
	ProgramCPU  int64 `json:"program_cpu_us"`
	ProgramWall int64 `json:"program_wall_us"`
	InitSetup   int64 `json:"init_setup_us,omitempty"`
	// Runs counts those runs.
	Runs int `json:"runs"`
}

// runCosts adds up the Results of a worker's runs.
type runCosts struct {
	mu   sync.Mutex
	cost ProbeCost
}

func (c *runCosts) observe(r *sandbox.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cost.Runs++
	c.cost.ProgramCPU += r.CPU.Microseconds()
	c.cost.ProgramWall += r.Wall.Microseconds()
	c.cost.InitSetup += r.InitSetup.Microseconds()
}

// done fills in the worker's own CPU and its children's, start being
// its own CPU time when its main began.
func (c *runCosts) done(start time.Duration) *ProbeCost {
	c.mu.Lock()
	out := c.cost
	c.mu.Unlock()
	out.StartCPU = start.Microseconds()
	out.WorkerCPU = (cpuOf(syscall.RUSAGE_SELF) - start).Microseconds()
	out.ChildCPU = cpuOf(syscall.RUSAGE_CHILDREN).Microseconds()
	return &out
}

// cpuOf is the user plus system time of who (RUSAGE_SELF, _CHILDREN).
func cpuOf(who int) time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(who, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// phaseOf names the phase of the run task t belongs to.
func phaseOf(t Task) string {
	switch {
	case t.Without != "" || t.Plain:
		return report.PhaseMasking
	case t.Defect == "":
		return report.PhaseBaseline
	}
	return report.PhaseDefects
}

// costs adds up, over one mutation run, where each phase's time went.
// A nil *costs adds nothing.
type costs struct {
	mu     sync.Mutex
	phases map[string]*phaseSum
	order  []string
}

// phaseSum is one phase's sums. The workers' shares stay in
// microseconds, as ProbeCost has them, until the report rounds them.
type phaseSum struct {
	elapsed, harness       time.Duration
	probeRuns, programRuns int
	probeWall, workerTotal time.Duration
	// in microseconds
	start, worker, helpers, program int64
	programWall, initSetup          int64
}

func newCosts() *costs { return &costs{phases: map[string]*phaseSum{}} }

func (c *costs) phase(name string) *phaseSum {
	p := c.phases[name]
	if p == nil {
		p = &phaseSum{}
		c.phases[name] = p
		c.order = append(c.order, name)
	}
	return p
}

// add counts one worker's run of task t.
func (c *costs) add(t Task, run probeRun) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.phase(phaseOf(t))
	p.probeRuns++
	p.probeWall += run.wall
	p.workerTotal += run.cpu
	if run.result == nil || run.result.Cost == nil {
		return
	}
	pc := run.result.Cost
	p.start += pc.StartCPU
	p.worker += pc.WorkerCPU
	p.helpers += max(0, pc.ChildCPU-pc.ProgramCPU)
	p.program += pc.ProgramCPU
	p.programWall += pc.ProgramWall
	p.initSetup += pc.InitSetup
	p.programRuns += pc.Runs
}

// timed records a phase's elapsed time and the harness's own CPU time
// in it: run it around the phase.
func (c *costs) timed(name string, f func()) {
	if c == nil {
		f()
		return
	}
	start, cpu := time.Now(), cpuOf(syscall.RUSAGE_SELF)
	f()
	elapsed, used := time.Since(start), cpuOf(syscall.RUSAGE_SELF)-cpu
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.phase(name)
	p.elapsed += elapsed
	p.harness += used
}

// report is the phases in the order they ran.
func (c *costs) report() []report.PhaseTiming {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ms := func(us int64) int64 { return us / 1000 }
	out := make([]report.PhaseTiming, 0, len(c.order))
	for _, n := range c.order {
		p := c.phases[n]
		out = append(out, report.PhaseTiming{Phase: n, ElapsedMS: p.elapsed.Milliseconds(), HarnessCPUMS: p.harness.Milliseconds(),
			ProbeRuns: p.probeRuns, ProbeWallMS: p.probeWall.Milliseconds(), WorkerTotalCPUMS: p.workerTotal.Milliseconds(),
			WorkerStartCPUMS: ms(p.start), WorkerCPUMS: ms(p.worker), HelperCPUMS: ms(p.helpers), ProgramCPUMS: ms(p.program),
			ProgramRuns: p.programRuns, ProgramWallMS: ms(p.programWall), InitSetupMS: ms(p.initSetup)})
	}
	return out
}
