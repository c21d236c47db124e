package harnesscmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/attacks"
	"sandboxlab/checks"
	"sandboxlab/cmd/internal/cli"
	"sandboxlab/harness"
	"sandboxlab/harness/harnesstest"
	"sandboxlab/report"
)

// writeReport writes m as a mutate report in JSON and returns its path.
func writeReport(t *testing.T, m *report.Mutation) string {
	t.Helper()
	b, err := json.Marshal(m)
	assert.NilError(t, err)
	f, err := os.CreateTemp(t.TempDir(), "mutate-*.json")
	assert.NilError(t, err)
	_, err = f.Write(b)
	assert.NilError(t, err)
	assert.NilError(t, f.Close())
	return f.Name()
}

// TestPrepareIncremental: --incremental reads the earlier run (none when
// FILE is missing, said on stderr; not with --force), every run records
// its input digests, and the new report replaces FILE whole.
func TestPrepareIncremental(t *testing.T) {
	// This test binary is no reexec helper: the fingerprint's 32-bit
	// probe would start it again.
	defer func(f func() harness.Fingerprint) { hostFingerprint = f }(hostFingerprint)
	hostFingerprint = func() harness.Fingerprint { return harness.Fingerprint{"kernel": "test"} }
	prev, err := harnesstest.PredictedRun()
	assert.NilError(t, err)
	prev.Run = &report.RunInfo{ID: "20261201T000000Z-abcdef"}
	file := writeReport(t, prev)
	prepare := func(o *mutateOptions) (*harness.Runner, string, error) {
		r := &harness.Runner{}
		var stderr strings.Builder
		err := o.prepareIncremental(t.Context(), r, &stderr)
		return r, stderr.String(), err
	}
	r, _, err := prepare(&mutateOptions{incremental: file})
	assert.NilError(t, err)
	assert.Assert(t, r.Previous != nil && r.Inputs != nil)
	assert.Check(t, is.Equal(r.Previous.Run.ID, prev.Run.ID))
	assert.Check(t, is.Len(r.Inputs.Probes, len(checks.All)+len(attacks.All())))

	r, _, err = prepare(&mutateOptions{incremental: file, force: true})
	assert.NilError(t, err)
	assert.Check(t, r.Previous == nil && r.Inputs != nil)

	missing := filepath.Join(t.TempDir(), "none.json")
	r, stderr, err := prepare(&mutateOptions{incremental: missing})
	assert.NilError(t, err)
	assert.Check(t, r.Previous == nil)
	assert.Check(t, is.Contains(stderr, "no earlier run at "+missing+": everything runs"))

	assert.NilError(t, os.WriteFile(missing, []byte("{not json"), 0o644))
	_, _, err = prepare(&mutateOptions{incremental: missing})
	assert.Check(t, is.ErrorContains(err, "is not a mutate report in JSON"))

	next, err := harnesstest.PredictedRun()
	assert.NilError(t, err)
	next.Run = &report.RunInfo{ID: "20261202T000000Z-123456", Reused: &report.Reused{From: prev.Run.ID, Changed: []string{}, BaselineProbeRuns: 3}}
	assert.NilError(t, writeMutationFile(file, next))
	back, err := readMutation(file)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(back.Run.Reused.From, prev.Run.ID))
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(file), ".*"))
	assert.Check(t, is.Len(left, 0), "no temporary file left")
	// The report written is --format json's, and replays.
	var out, errs strings.Builder
	code := cli.Dispatch(t.Context(), cli.Harness, Commands(), []string{"mutate", "--replay", file}, &out, &errs)
	assert.Check(t, is.Equal(code, 0), errs.String())
	assert.Check(t, is.Contains(out.String(), "Reused from run "+prev.Run.ID))
}
