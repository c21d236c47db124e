package harness

import (
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"sandboxlab/report"
	"sandboxlab/sandbox"
)

func TestPhaseOf(t *testing.T) {
	assert.Equal(t, phaseOf(Task{Probe: "p"}), report.PhaseBaseline)
	assert.Equal(t, phaseOf(Task{Probe: "p", Defect: "d"}), report.PhaseDefects)
	assert.Equal(t, phaseOf(Task{Probe: "p", Defect: "d", Without: "seccomp"}), report.PhaseMasking)
	assert.Equal(t, phaseOf(Task{Probe: "p", Plain: true}), report.PhaseMasking)
}

// TestCostsSplit: a worker's children less its programs are the inits
// and helpers; a worker without a result is counted, not split; sums
// are kept in microseconds, so that many sub-millisecond shares still
// add up.
func TestCostsSplit(t *testing.T) {
	var rc runCosts
	for range 4 {
		rc.observe(&sandbox.Result{CPU: 300 * time.Microsecond, Wall: 900 * time.Microsecond, InitSetup: 100 * time.Microsecond})
	}
	pc := rc.done(0)
	assert.Equal(t, pc.Runs, 4)
	assert.Equal(t, pc.ProgramCPU, int64(1200))
	assert.Equal(t, pc.ProgramWall, int64(3600))
	assert.Equal(t, pc.InitSetup, int64(400))
	assert.Assert(t, pc.WorkerCPU > 0, "this test's own CPU time")

	c := newCosts()
	t1 := Task{Probe: "a", Defect: "d"}
	for range 5 {
		c.add(t1, probeRun{wall: time.Second, cpu: 500 * time.Millisecond, result: &ProbeResult{Cost: &ProbeCost{
			StartCPU: 400, WorkerCPU: 700, ChildCPU: 900, ProgramCPU: 600, ProgramWall: 800, Runs: 1}}})
	}
	c.add(Task{Probe: "b"}, probeRun{wall: time.Second, err: errHung}) // no result: counted, not split
	got := c.report()
	assert.DeepEqual(t, got, []report.PhaseTiming{
		{Phase: report.PhaseDefects, ProbeRuns: 5, ProbeWallMS: 5000, WorkerTotalCPUMS: 2500,
			WorkerStartCPUMS: 2, WorkerCPUMS: 3, HelperCPUMS: 1, ProgramCPUMS: 3, ProgramRuns: 5, ProgramWallMS: 4},
		{Phase: report.PhaseBaseline, ProbeRuns: 1, ProbeWallMS: 1000},
	})
}

// TestMergedTiming: a merged report keeps the first shard's baseline
// (every shard ran it) and adds up the shards' other phases.
func TestMergedTiming(t *testing.T) {
	shard := func(base, defects int64) *report.Mutation {
		return &report.Mutation{Run: &report.RunInfo{Timing: []report.PhaseTiming{
			{Phase: report.PhaseBaseline, ElapsedMS: base, ProbeRuns: 3},
			{Phase: report.PhaseDefects, ElapsedMS: defects, ProbeRuns: 2, ProgramCPUMS: defects},
		}}}
	}
	got := mergedTiming([]*report.Mutation{shard(10, 100), shard(11, 200), shard(12, 300)})
	assert.DeepEqual(t, got, []report.PhaseTiming{
		{Phase: report.PhaseBaseline, ElapsedMS: 10, ProbeRuns: 3},
		{Phase: report.PhaseDefects, ElapsedMS: 600, ProbeRuns: 6, ProgramCPUMS: 600},
	})
}
