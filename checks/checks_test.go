package checks

import (
	"context"
	"testing"

	"gotest.tools/v3/skip"

	"sandboxlab/report"
)

// TestChecks runs every promise check on the correct sandbox. Checks run
// one after another: some measure the harness's own memory and time.
func TestChecks(t *testing.T) {
	skip.If(t, testing.Short(), "the mutation run's baseline runs every check (TestMutate in cmd/sandboxlab)")
	for _, c := range All {
		t.Run(c.ID, func(t *testing.T) {
			var out report.Check
			c.Run(context.Background(), t, &out)
			t.Logf("%s: %s (%d ms)", c.ID, out.Evidence, out.MS)
		})
	}
}
