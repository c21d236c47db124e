package compat

import (
	"context"
	"os"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/reexec"
)

func TestMain(m *testing.M) {
	reexec.Init() // the sandbox's init runs from this binary
	os.Exit(m.Run())
}

// TestSuitePasses runs every workload at L5 and L6: each must pass at
// both, or be skipped for a program this machine lacks.
func TestSuitePasses(t *testing.T) {
	levels := DefaultLevels
	if !sandbox.HostRoot() {
		levels = []int{5} // an ordinary user's L6 is refused on a machine without delegated control groups
	}
	rep, err := Run(context.Background(), Options{Levels: levels})
	assert.NilError(t, err)
	var b strings.Builder
	assert.NilError(t, rep.Tables(&b, false))
	t.Log("\n" + b.String())
	assert.Check(t, len(rep.Workloads) >= 30, "%d workloads: the suite promises at least 30", len(rep.Workloads))
	for _, r := range rep.Results {
		assert.Check(t, r.Passed || r.Skipped != "", "%s at L%d: %s", r.Workload, r.Level, r.Detail)
	}
}
