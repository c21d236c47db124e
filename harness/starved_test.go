package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/poll"

	"sandboxlab/report"
)

// TestStarvedFailureRunsTwice: a probe that failed with a run starved of
// CPU, or a check not about time that failed with a run stopped at its
// clock (its program may have waited on the host's proxy, which starving
// does not measure), runs once more and the second verdict stands, saying
// so; a failure with neither, a pass, and a second such failure run no
// more.
func TestStarvedFailureRunsTwice(t *testing.T) {
	check := func(passed bool, starved, clockStops int) ProbeResult {
		return ProbeResult{Check: &report.Check{ID: "wall_timeout", Passed: passed, Evidence: fmt.Sprintf("passed %v", passed)},
			Starved: starved, ClockStops: clockStops}
	}
	for _, c := range []struct {
		name   string
		runs   []ProbeResult
		calls  int
		passed bool
		note   string
	}{
		{"starved failure, then a pass", []ProbeResult{check(false, 1, 0), check(true, 0, 0)}, 2, true, "1 of its runs stopped at the time limit starved of CPU"},
		{"starved twice", []ProbeResult{check(false, 2, 0), check(false, 1, 0)}, 2, false, "run twice"},
		{"a failure not starved", []ProbeResult{check(false, 0, 0)}, 1, false, ""},
		{"a starved pass", []ProbeResult{check(true, 1, 0)}, 1, true, ""},
		{"clock stop, then a pass", []ProbeResult{check(false, 0, 1), check(true, 0, 0)}, 2, true, "1 of its runs stopped at a clock the check does not test"},
		{"clock stop twice", []ProbeResult{check(false, 0, 1), check(false, 0, 1)}, 2, false, "the first run failed"},
		{"a pass with a clock stop", []ProbeResult{check(true, 0, 1)}, 1, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, calls := cannedWorker(t, c.runs)
			got := r.runTask(context.Background(), Task{Probe: "wall_timeout"}, nil, nil)
			assert.NilError(t, got.err)
			assert.Check(t, is.Equal(*calls, c.calls))
			assert.Check(t, is.Equal(got.result.Check.Passed, c.passed))
			if c.note != "" {
				assert.Check(t, is.Contains(got.result.Check.Evidence, c.note))
			} else {
				assert.Check(t, is.Equal(got.result.Check.Evidence, fmt.Sprintf("passed %v", c.passed)))
			}
		})
	}
}

// TestClockStopsOfWhatIsNotAboutTime: a run stopped at its clock counts
// as the machine's in a check not about time, and in a cell of an attack
// whose program ends by itself; in a check about time (wall_timeout), or
// a cell whose program runs until a limit stops it, it is the verdict's
// own matter.
func TestClockStopsOfWhatIsNotAboutTime(t *testing.T) {
	stop := []ProbeTimeout{{Level: 4, LateMS: 3}}
	assert.Check(t, is.Equal(clockStops(&ProbeResult{Check: &report.Check{ID: "egress_direct_fails"}, Timeouts: stop}), 1))
	assert.Check(t, is.Equal(clockStops(&ProbeResult{Check: &report.Check{ID: "egress_direct_fails"}}), 0))
	assert.Check(t, is.Equal(clockStops(&ProbeResult{Check: &report.Check{ID: "wall_timeout"}, Timeouts: stop}), 0))
	assert.Check(t, is.Equal(clockStops(&ProbeResult{Cell: &report.Cell{Attack: "host_socket", Level: 4}, Timeouts: stop}), 1))
	assert.Check(t, is.Equal(clockStops(&ProbeResult{Cell: &report.Cell{Attack: "host_socket", Level: 4}}), 0))
	for _, loops := range []string{"runaway_loop", "fork_bomb", "lingering_child"} {
		assert.Check(t, is.Equal(clockStops(&ProbeResult{Cell: &report.Cell{Attack: loops, Level: 4}, Timeouts: stop}), 0), loops)
	}
}

// TestStarvedStoppedCellRunsTwice: an attack cell that reads stopped with
// a run starved of CPU is as inconclusive as a starved failure (its
// program may have been stopped before it tried): it runs once more and
// the second verdict stands. A cell stopped without starving, or one that
// escaped a second time starved, runs no more (unless it stopped at the
// clock, which its program, one that ends by itself, should not meet); nor
// does a stopped cell
// whose program loops at the lowest priority (Runner.Idle), starved by
// design, though its starved escape does.
func TestStarvedStoppedCellRunsTwice(t *testing.T) {
	cell := func(escaped bool, starved int) ProbeResult {
		return ProbeResult{Cell: &report.Cell{Attack: "exfiltrate", Level: 5, Escaped: escaped, Evidence: fmt.Sprintf("escaped %v", escaped)},
			Starved: starved}
	}
	clockStop := func(r ProbeResult) ProbeResult { r.ClockStops = 1; return r }
	runaway := func(level int, escaped bool) ProbeResult {
		return ProbeResult{Cell: &report.Cell{Attack: "runaway_loop", Level: level, Escaped: escaped, Evidence: fmt.Sprintf("escaped %v", escaped)}}
	}
	for _, c := range []struct {
		name    string
		runs    []ProbeResult
		calls   int
		escaped bool
		note    string
	}{
		{"starved stop, then an escape", []ProbeResult{cell(false, 1), cell(true, 0)}, 2, true, "the first run read stopped with 1 of its runs"},
		{"starved escape, then a stop", []ProbeResult{cell(true, 2), cell(false, 0)}, 2, false, "the first run failed with 2 of its runs"},
		{"starved stop twice", []ProbeResult{cell(false, 1), cell(false, 1)}, 2, false, "the first run read stopped"},
		{"a stop not starved", []ProbeResult{cell(false, 0)}, 1, false, ""},
		{"a stop at the clock, then an escape", []ProbeResult{clockStop(cell(false, 0)), cell(true, 0)}, 2, true, "the first run read stopped with 1 of its runs stopped at the clock"},
		{"idle: a starved stop", []ProbeResult{cell(false, 1)}, 1, false, ""},
		{"idle: a starved escape, then a stop", []ProbeResult{cell(true, 1), cell(false, 0)}, 2, false, "the first run failed with 1 of its runs"},
		{"an escape not starved", []ProbeResult{cell(true, 0)}, 1, true, ""},
		// An escape judged by a margin of time, where the correct sandbox
		// stops the attack, runs again even though no run met its clock.
		{"idle: an escape by a margin of time, then a stop", []ProbeResult{runaway(3, true), runaway(3, false)}, 2, false, "the first run failed with an escape its judge called by a margin of time"},
		{"idle: an escape by a margin of time twice", []ProbeResult{runaway(5, true), runaway(5, true)}, 2, true, "the first run failed with an escape"},
		{"idle: an escape by a margin of time where none is stopped", []ProbeResult{runaway(0, true)}, 1, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, calls := cannedWorker(t, c.runs)
			r.Idle = func(string) bool { return strings.HasPrefix(c.name, "idle:") }
			got := r.runTask(context.Background(), Task{Probe: "exfiltrate@L5"}, nil, nil)
			assert.NilError(t, got.err)
			assert.Check(t, is.Equal(*calls, c.calls))
			assert.Check(t, is.Equal(got.result.Cell.Escaped, c.escaped))
			if c.note != "" {
				assert.Check(t, is.Contains(got.result.Cell.Evidence, c.note))
			} else {
				assert.Check(t, is.Equal(got.result.Cell.Evidence, fmt.Sprintf("escaped %v", c.escaped)))
			}
		})
	}
}

// TestTimedEscapeListed: a cell run again for an escape by its judge's
// margin of time is listed with the starved probes, so that the report
// says why it ran twice.
func TestTimedEscapeListed(t *testing.T) {
	escaped := ProbeResult{Cell: &report.Cell{Attack: "runaway_loop", Level: 3, Escaped: true}}
	stopped := ProbeResult{Cell: &report.Cell{Attack: "runaway_loop", Level: 3, StoppedBy: "wall clock"}}
	r, _ := cannedWorker(t, []ProbeResult{escaped, stopped})
	r.stops = newStops()
	assert.NilError(t, r.runTask(context.Background(), Task{Probe: "runaway_loop@L3", Defect: "cpu_soft_only"}, nil, nil).err)
	_, starved := r.stops.report()
	assert.Check(t, is.DeepEqual(starved, []report.StarvedProbe{{Probe: "runaway_loop@L3", Defect: "cpu_soft_only", TimedEscape: true, RanTwice: true}}))
}

// TestStarvedRerunRunsAlone: the second run of an inconclusive probe
// gives back its place in the pool and waits until no other probe runs:
// the load that starved it was mostly the harness's own.
func TestStarvedRerunRunsAlone(t *testing.T) {
	failed := ProbeResult{Check: &report.Check{ID: "wall_timeout", Evidence: "stopped"}, Starved: 1}
	passed := ProbeResult{Check: &report.Check{ID: "wall_timeout", Passed: true, Evidence: "passed"}}
	r, calls := cannedWorker(t, []ProbeResult{failed, passed})
	var othersDone atomic.Bool
	canned := r.Worker
	r.Worker = func(ctx context.Context, task Task) *exec.Cmd {
		if *calls == 1 {
			assert.Check(t, othersDone.Load(), "the second run began while another probe held its place")
		}
		return canned(ctx, task)
	}
	ctx := context.Background()
	pl := newPool(4, 2)
	other, err := pl.wait(ctx, pl.enqueue(0.1))
	assert.NilError(t, err)
	mine, err := pl.wait(ctx, pl.enqueue(0.1))
	assert.NilError(t, err)
	got := make(chan probeRun, 1)
	go func() { got <- r.runTask(ctx, Task{Probe: "wall_timeout"}, pl, mine) }()

	// Once the first run is judged, the second waits in the queue, its
	// place given back, until the other probe is done.
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		pl.mu.Lock()
		defer pl.mu.Unlock()
		if len(pl.queue) == 1 && pl.running == 1 {
			return poll.Success()
		}
		return poll.Continue("%d queued, %d running", len(pl.queue), pl.running)
	}, poll.WithTimeout(30*time.Second), poll.WithDelay(time.Millisecond))
	othersDone.Store(true)
	other()
	run := <-got
	mine() // the caller gives its place back too: a no-op by now
	assert.NilError(t, run.err)
	assert.Check(t, is.Equal(*calls, 2))
	assert.Check(t, run.result.Check.Passed)
	assert.Check(t, is.Contains(run.result.Check.Evidence, "run twice, the second alone"))
	pl.mu.Lock()
	defer pl.mu.Unlock()
	assert.Check(t, is.Equal(pl.running, 0), "places still held")
	assert.Check(t, pl.load < 1e-9, "load still counted: %v", pl.load)
}

// cannedWorker is a runner whose worker reports runs[i] at its i-th call
// (and fails the test at a call past them); calls counts them.
func cannedWorker(t *testing.T, runs []ProbeResult) (r *Runner, calls *int) {
	dir := t.TempDir()
	calls = new(int)
	r = &Runner{Timeout: time.Minute, Worker: func(ctx context.Context, _ Task) *exec.Cmd {
		assert.Assert(t, *calls < len(runs), "run %d times", *calls+1)
		b, err := json.Marshal(runs[*calls])
		assert.NilError(t, err)
		path := filepath.Join(dir, fmt.Sprint(*calls))
		assert.NilError(t, os.WriteFile(path, b, 0o644))
		*calls++
		return exec.CommandContext(ctx, "cat", path)
	}}
	return r, calls
}

// TestStopsGathered: the runs stopped at their time limit that workers
// report are gathered by level, the baseline's apart from the defects',
// with the backstop's count and the latest kills named by probe; the
// starved probes are listed, the one that
// failed starved marked as run twice; and merging shards keeps the first
// shard's baseline and every shard's defects.
func TestStopsGathered(t *testing.T) {
	results := map[string]ProbeResult{
		"a": {Check: &report.Check{ID: "a", Passed: true}, Timeouts: []ProbeTimeout{{Level: 6, LateMS: 3, InitLateMS: ptr(int64(2))}, {Level: 5, LateMS: 40}}},
		"b": {Check: &report.Check{ID: "b", Passed: true}, Timeouts: []ProbeTimeout{{Level: 6, LateMS: 260, Backstop: true}}},
		// Fails starved on its first run, then passes.
		"c": {Check: &report.Check{ID: "c"}, Starved: 1, Timeouts: []ProbeTimeout{{Level: 6, LateMS: 1, Starved: true}}},
	}
	dir := t.TempDir()
	calls := map[string]int{}
	r := &Runner{Timeout: time.Minute, Worker: func(ctx context.Context, task Task) *exec.Cmd {
		res := results[task.Probe]
		if task.Probe == "c" && calls["c"] > 0 {
			res = ProbeResult{Check: &report.Check{ID: "c", Passed: true}}
		}
		calls[task.Probe]++
		b, err := json.Marshal(res)
		assert.NilError(t, err)
		path := filepath.Join(dir, fmt.Sprint(task.Probe, calls[task.Probe]))
		assert.NilError(t, os.WriteFile(path, b, 0o644))
		return exec.CommandContext(ctx, "cat", path)
	}}
	r.stops = newStops()
	for _, task := range []Task{{Probe: "a"}, {Probe: "b", Defect: "fail_open"}, {Probe: "c", Defect: "no_sweep"}, {Probe: "a", Without: "seccomp"}} {
		assert.NilError(t, r.runTask(context.Background(), task, nil, nil).err)
	}
	kl, starved := r.stops.report()
	latest5 := []report.LateKill{{Probe: "a", LateMS: 40}, {Probe: "a", Defect: "the masking search", LateMS: 40}}
	latest6 := []report.LateKill{{Probe: "b", Defect: "fail_open", LateMS: 260, Backstop: true}, {Probe: "a", LateMS: 3, InitLateMS: ptr(int64(2))},
		{Probe: "a", Defect: "the masking search", LateMS: 3, InitLateMS: ptr(int64(2))}, {Probe: "c", Defect: "no_sweep", LateMS: 1, Starved: true}}
	assert.Check(t, is.DeepEqual(kl, []report.KillLate{
		{Level: 5, BaselineMS: []int64{40}, DefectsMS: []int64{40}, Latest: latest5},
		{Level: 6, BaselineMS: []int64{3}, DefectsMS: []int64{1, 3, 260}, BaselineInitMS: []int64{2}, DefectsInitMS: []int64{2}, DefectsBackstop: 1, Latest: latest6},
	}))
	assert.Check(t, is.DeepEqual(starved, []report.StarvedProbe{{Probe: "c", Defect: "no_sweep", Runs: 1, RanTwice: true}}))
	assert.Check(t, is.Equal(report.Percentile(kl[1].DefectsMS, 50), int64(3)))
	assert.Check(t, is.Equal(report.Percentile(kl[1].DefectsMS, 99), int64(260)))
	assert.Check(t, is.Equal(report.Percentile(nil, 99), int64(0)))

	shard := func(kl []report.KillLate, starved []report.StarvedProbe) *report.Mutation {
		return &report.Mutation{Run: &report.RunInfo{KillLate: kl, Starved: starved}}
	}
	mkl, mstarved := mergedStops([]*report.Mutation{
		shard(kl, starved),
		shard([]report.KillLate{{Level: 6, BaselineMS: []int64{3}, DefectsMS: []int64{7}, BaselineInitMS: []int64{9}, DefectsInitMS: []int64{1},
			Latest: []report.LateKill{{Probe: "z", LateMS: 900}, {Probe: "d", Defect: "fail_open", LateMS: 7}}}, {Level: 1, BaselineMS: []int64{}, DefectsMS: []int64{9}, DefectsBackstop: 0}},
			[]report.StarvedProbe{{Probe: "a", Runs: 1}, {Probe: "b", Defect: "fail_open", Runs: 2}}),
	})
	assert.Check(t, is.DeepEqual(mkl, []report.KillLate{
		{Level: 1, BaselineMS: []int64{}, DefectsMS: []int64{9}},
		{Level: 5, BaselineMS: []int64{40}, DefectsMS: []int64{40}, Latest: latest5},
		// The second shard's baseline kill (z) is not the merged report's.
		{Level: 6, BaselineMS: []int64{3}, DefectsMS: []int64{1, 3, 7, 260}, BaselineInitMS: []int64{2}, DefectsInitMS: []int64{1, 2}, DefectsBackstop: 1,
			Latest: []report.LateKill{latest6[0], {Probe: "d", Defect: "fail_open", LateMS: 7}, latest6[1], latest6[2], latest6[3]}},
	}))
	assert.Check(t, is.DeepEqual(mstarved, []report.StarvedProbe{{Probe: "b", Defect: "fail_open", Runs: 2}, {Probe: "c", Defect: "no_sweep", Runs: 1, RanTwice: true}}))
}

func ptr[T any](v T) *T { return &v }
