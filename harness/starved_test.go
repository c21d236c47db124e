package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/report"
)

// TestStarvedFailureRunsTwice: a probe that failed with a run starved of
// CPU runs once more and the second verdict stands, saying so; a failure
// without starving, a pass, and a second starved failure run no more.
func TestStarvedFailureRunsTwice(t *testing.T) {
	check := func(passed bool, starved int) ProbeResult {
		return ProbeResult{Check: &report.Check{ID: "wall_timeout", Passed: passed, Evidence: fmt.Sprintf("passed %v", passed)}, Starved: starved}
	}
	for _, c := range []struct {
		name   string
		runs   []ProbeResult
		calls  int
		passed bool
		note   bool
	}{
		{"starved failure, then a pass", []ProbeResult{check(false, 1), check(true, 0)}, 2, true, true},
		{"starved twice", []ProbeResult{check(false, 2), check(false, 1)}, 2, false, true},
		{"a failure not starved", []ProbeResult{check(false, 0)}, 1, false, false},
		{"a starved pass", []ProbeResult{check(true, 1)}, 1, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			calls := 0
			r := &Runner{Timeout: time.Minute, Worker: func(ctx context.Context, _ Task) *exec.Cmd {
				assert.Assert(t, calls < len(c.runs), "run %d times", calls+1)
				b, err := json.Marshal(c.runs[calls])
				assert.NilError(t, err)
				path := filepath.Join(dir, fmt.Sprint(calls))
				assert.NilError(t, os.WriteFile(path, b, 0o644))
				calls++
				return exec.CommandContext(ctx, "cat", path)
			}}
			got := r.runTask(context.Background(), Task{Probe: "wall_timeout"})
			assert.NilError(t, got.err)
			assert.Check(t, is.Equal(calls, c.calls))
			assert.Check(t, is.Equal(got.result.Check.Passed, c.passed))
			if c.note {
				assert.Check(t, is.Contains(got.result.Check.Evidence, "run twice"))
			} else {
				assert.Check(t, is.Equal(got.result.Check.Evidence, fmt.Sprintf("passed %v", c.passed)))
			}
		})
	}
}
