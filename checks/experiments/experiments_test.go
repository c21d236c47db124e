package experiments

import (
	"context"
	"os"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/sandbox/reexec"
)

// The test binary doubles as the sandbox's init and the experiments'
// helpers.
func TestMain(m *testing.M) {
	reexec.Init()
	os.Exit(m.Run())
}

func TestExperimentCPUQuirk(t *testing.T) {
	e, err := cpuQuirk(context.Background())
	assert.NilError(t, err)
	assert.Assert(t, is.Len(e.Rows, 3))
	soft, pid1, softOnly := e.Rows[0], e.Rows[1], e.Rows[2]
	assert.Check(t, is.Contains(soft.Outcome, "CPU limit"))
	assert.Check(t, is.Contains(pid1.Outcome, "CPU limit"))
	assert.Check(t, pid1.Value > soft.Value+0.5, "PID 1 ran to the hard limit: %v vs %v s", pid1.Value, soft.Value)
	assert.Check(t, is.Contains(softOnly.Outcome, "wall clock"), "with the soft limit only PID 1 is not stopped by it")
}

func TestExperimentNproc(t *testing.T) {
	e, err := nprocExperiment(context.Background())
	assert.NilError(t, err)
	assert.Assert(t, is.Len(e.Rows, 2))
	if e.Identity.Root {
		assert.Check(t, is.Equal(e.Rows[0].Value, 30.0), "RLIMIT_NPROC does not bind root mapped 0→0")
	} else {
		assert.Check(t, e.Rows[0].Value <= 5, "RLIMIT_NPROC binds an ordinary user")
	}
	assert.Check(t, is.Contains(e.Rows[1].Outcome, "process monitor"))
}

func TestExperimentLayerHiding(t *testing.T) {
	e, err := layerHiding(context.Background())
	assert.NilError(t, err)
	assert.Assert(t, is.Len(e.Rows, 2))
	assert.Check(t, is.Equal(e.Rows[0].Value, 0.0), "with the CPU limit on, the survivors die before the check looks")
	assert.Check(t, is.Equal(e.Rows[1].Value, 2.0), "with it off, both survivors are found")
}
