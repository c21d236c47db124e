package harness

import (
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestWorker runs real probes in the real worker (this test binary, as
// the runner starts it): a check and an attack cell on the correct
// sandbox and with a defect on that each catches, the worker recording
// the planted sites the probe reaches when asked.
func TestWorker(t *testing.T) {
	r := &Runner{Worker: WorkerCommand, Timeout: time.Minute}
	for _, tc := range []struct {
		task   Task
		caught bool // the check failed, or the cell escaped
	}{
		{Task{Probe: "exit_status", Cover: true}, false},
		{Task{Probe: "exit_status", Defect: "exit_code_lost"}, true},
		{Task{Probe: "env_secrets@L2", Cover: true}, false},
		{Task{Probe: "env_secrets@L2", Defect: "env_inherited"}, true},
	} {
		run := r.runTask(t.Context(), tc.task, nil, nil)
		assert.Assert(t, run.err, "%+v", tc.task)
		res := run.result
		switch {
		case res.Check != nil:
			assert.Check(t, is.Equal(res.Check.ID, tc.task.Probe))
			assert.Check(t, is.Equal(!res.Check.Passed, tc.caught), "%+v: %s", tc.task, res.Check.Evidence)
		case res.Cell != nil:
			assert.Check(t, is.Equal(res.Cell.Name(), tc.task.Probe))
			assert.Check(t, is.Equal(res.Cell.Escaped, tc.caught), "%+v: %s", tc.task, res.Cell.Evidence)
			assert.Check(t, is.Contains(res.Layers, "scrub_env"), "%+v: the level's layers", tc.task)
		default:
			t.Fatalf("%+v: no verdict", tc.task)
		}
		if tc.task.Cover {
			reaches := map[string]string{"exit_status": "exit_code_lost", "env_secrets@L2": "env_inherited"}
			assert.Check(t, is.Contains(res.Reached, reaches[tc.task.Probe]), "%+v", tc.task)
		} else {
			assert.Check(t, is.Len(res.Reached, 0), "%+v: coverage recorded unasked", tc.task)
		}
	}

	// A check whose runs end at their time limit: the worker reports each
	// such run, as its sessions observed it, and none of the others.
	run := r.runTask(t.Context(), Task{Probe: "wall_timeout"}, nil, nil)
	assert.Assert(t, run.err)
	assert.Check(t, run.result.Check != nil && run.result.Check.Passed, "%+v", run.result.Check)
	assert.Check(t, len(run.result.Timeouts) > 0, "no timeout gathered from the check's runs")
	for _, to := range run.result.Timeouts {
		assert.Check(t, to.Level > 0 && to.LateMS >= 0, "%+v", to)
	}
	run = r.runTask(t.Context(), Task{Probe: "exit_status"}, nil, nil)
	assert.Assert(t, run.err)
	assert.Check(t, is.Len(run.result.Timeouts, 0), "a check none of whose runs timed out")
}
