package harness

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/mutants"
	"sandboxlab/report"
	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

// courseResults are canned runs: every course defect fails wall_timeout,
// as predicted.
func courseResults() map[string]*WorkerResult {
	results := map[string]*WorkerResult{"": result(nil)}
	for _, d := range courseDefects() {
		results[string(d.ID)] = result([]string{"wall_timeout"})
	}
	return results
}

func runFakes(t *testing.T, f *fakes, r *Runner) *report.Mutation {
	t.Helper()
	r.Worker = f.worker(t)
	if r.Predictions == nil {
		r.Predictions = predictions(t, nil)
	}
	r.Jobs, r.Timeout, r.FailOn = 4, 5*time.Second, verdict.FailOnEscape
	m, err := r.Run(context.Background())
	assert.NilError(t, err)
	return m
}

// TestSelection: a defect runs only the probes that reach its site and
// keeps the baseline's verdict for the others; one that nothing reaches
// runs nothing and is reported not reached.
func TestSelection(t *testing.T) {
	results := courseResults()
	// no_sweep breaks file_links too, but nothing it reaches shows it:
	// selection takes the baseline's verdict there, as it must.
	results[string(mutants.NoSweep)] = result([]string{"wall_timeout", "file_links"})
	f := &fakes{results: results, reach: map[string][]string{
		string(mutants.NoSweep):     {"wall_timeout", "runaway_loop@L2"},
		string(mutants.CapsKept):    {},
		string(mutants.NoNetNS):     {"wall_timeout"},
		string(mutants.FailOpen):    {"wall_timeout", "timeout_flag", "file_links"},
		string(mutants.NoPIDNS):     {"wall_timeout"},
		string(mutants.NoMountHide): {"wall_timeout"},
	}}
	only := []string{string(mutants.FailOpen), string(mutants.NoSweep), string(mutants.NoNetNS), string(mutants.CapsKept)}
	m := runFakes(t, f, &Runner{Only: only})
	d := defects(m)
	assert.Check(t, is.DeepEqual(d[string(mutants.NoSweep)].FailedChecks, []string{"wall_timeout"}))
	assert.Check(t, is.DeepEqual(d[string(mutants.NoSweep)].Reached, []string{"wall_timeout", "runaway_loop@L2"}))
	assert.Check(t, is.Equal(d[string(mutants.NoSweep)].Probes, 2))
	ran := slices.Sorted(slices.Values(f.asked[string(mutants.NoSweep)])) // probes run in any order
	assert.Check(t, is.DeepEqual(ran, []string{"runaway_loop@L2", "wall_timeout"}), "only the reached probes ran")
	caps := d[string(mutants.CapsKept)]
	assert.Check(t, caps.NotReached)
	assert.Check(t, is.Equal(caps.Outcome, verdict.Escaped))
	assert.Check(t, is.Len(f.asked[string(mutants.CapsKept)], 0), "nothing ran")
	assert.Check(t, is.Equal(m.Run.ProbeRuns, 3+2+1))
	assert.Check(t, is.Equal(m.Run.ProbeRunsUnselected, 4*15))
	assert.Check(t, is.Len(m.Run.Coverage, 15))

	// Without selection every probe runs, and no_sweep's file_links shows.
	f = &fakes{results: results, reach: f.reach}
	all := runFakes(t, f, &Runner{Only: only, NoSelect: true})
	assert.Check(t, is.DeepEqual(defects(all)[string(mutants.NoSweep)].FailedChecks, []string{"wall_timeout", "file_links"}))
	assert.Check(t, is.Len(f.asked[string(mutants.CapsKept)], 15))
}

// TestSelectionByLayer: a probe that declares the layers its verdict
// depends on runs under a defect of one layer only when it names that
// layer; a defect of no one layer runs wherever its site is reached, and
// without selection everything runs.
func TestSelectionByLayer(t *testing.T) {
	results := courseResults()
	// A wrong declaration would hide this: no_net_ns's file_links failure
	// shows only where file_links runs under it.
	results[string(mutants.NoNetNS)] = result([]string{"wall_timeout", "file_links"})
	reach := map[string][]string{
		string(mutants.NoNetNS):  {"wall_timeout", "file_links", "runaway_loop@L4"},
		string(mutants.NoPIDNS):  {"wall_timeout", "file_links", "runaway_loop@L4"},
		string(mutants.FailOpen): {"wall_timeout", "file_links", "runaway_loop@L4"},
	}
	layer := func(id mutants.ID) string {
		d, err := mutants.Lookup(string(id))
		assert.NilError(t, err)
		return d.Layer()
	}
	assert.Check(t, is.Equal(layer(mutants.NoNetNS), "network_namespace"))
	assert.Check(t, is.Equal(layer(mutants.FailOpen), ""))
	u := universe
	u.Touches = map[string][]string{"file_links": {"pid_namespace"}, "runaway_loop": {"wall_clock", "pid_namespace"}}
	p, err := ParsePredictions([]byte(valid(nil)), u)
	assert.NilError(t, err)
	only := []string{string(mutants.NoNetNS), string(mutants.NoPIDNS), string(mutants.FailOpen)}
	f := &fakes{results: results, reach: reach}
	m := runFakes(t, f, &Runner{Only: only, Predictions: p})
	ran := func(f *fakes, id mutants.ID) []string { return slices.Sorted(slices.Values(f.asked[string(id)])) }
	assert.Check(t, is.DeepEqual(ran(f, mutants.NoNetNS), []string{"wall_timeout"}), "a declared probe without the layer does not run")
	assert.Check(t, is.DeepEqual(ran(f, mutants.NoPIDNS), []string{"file_links", "runaway_loop@L4", "wall_timeout"}))
	assert.Check(t, is.DeepEqual(ran(f, mutants.FailOpen), []string{"file_links", "runaway_loop@L4", "wall_timeout"}), "a defect of no one layer")
	d := defects(m)
	assert.Check(t, is.DeepEqual(d[string(mutants.NoNetNS)].FailedChecks, []string{"wall_timeout"}), "the baseline's verdict stands where it did not run")
	assert.Check(t, is.DeepEqual(d[string(mutants.NoNetNS)].Reached, reach[string(mutants.NoNetNS)]), "coverage is reported whole")
	assert.Check(t, is.Equal(d[string(mutants.NoNetNS)].Probes, 1))

	f = &fakes{results: results, reach: reach}
	all := runFakes(t, f, &Runner{Only: only, Predictions: p, NoSelect: true})
	assert.Check(t, is.DeepEqual(defects(all)[string(mutants.NoNetNS)].FailedChecks, []string{"wall_timeout", "file_links"}))
}

// TestDefectLayersAreLayers: every layer a defect or a probe names is one
// of the policy's, and each declaring probe names at least one.
func TestDefectLayersAreLayers(t *testing.T) {
	for _, d := range mutants.All {
		if l := d.Layer(); l != "" {
			_, err := sandbox.LookupLayer(l)
			assert.Check(t, err, "defect %s", d.ID)
		}
	}
	u := Registered()
	assert.Check(t, len(u.Touches) > 0)
	for id, ls := range u.Touches {
		assert.Check(t, len(ls) > 0, "%s declares no layer: it would run under no one-layer defect", id)
		for _, l := range ls {
			_, err := sandbox.LookupLayer(l)
			assert.Check(t, err, "probe %s", id)
		}
	}
}

func defects(m *report.Mutation) map[string]report.Defect {
	out := map[string]report.Defect{}
	for _, d := range m.Defects {
		out[d.ID] = d
	}
	return out
}

// TestShardsMerge: the shards of a run, merged, are the unsharded run,
// timings aside; shards of other runs are refused.
func TestShardsMerge(t *testing.T) {
	results := courseResults()
	results[string(mutants.CapsKept)] = result(nil) // an unexpected escape
	results[string(mutants.NoNetNS)] = result([]string{"wall_timeout"}, "file_api_symlink@L4")
	only := []string{string(mutants.FailOpen), string(mutants.TimeoutHidden), string(mutants.CapsKept), string(mutants.NoNetNS), string(mutants.NoSweep)}
	run := func(shard Shard) *report.Mutation {
		m := runFakes(t, &fakes{results: results}, &Runner{Only: only, Shard: shard, Build: "b1", PredictionsDigest: "p1"})
		b, err := json.Marshal(m)
		assert.NilError(t, err)
		var back report.Mutation
		assert.NilError(t, json.Unmarshal(b, &back))
		return &back
	}
	whole := run(Shard{})
	var shards []*report.Mutation
	for k := 3; k >= 1; k-- { // any order
		s := run(Shard{K: k, N: 3})
		assert.Check(t, len(s.Defects) < len(only))
		shards = append(shards, s)
	}
	merged, err := Merge(shards, verdict.FailOnEscape)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(untimed(merged), untimed(whole)))
	assert.Check(t, is.Equal(ExitCode(merged), 2))

	_, err = Merge(shards[:2], verdict.FailOnEscape)
	assert.Check(t, is.ErrorContains(err, "missing shards: 1/3"))
	other := run(Shard{K: 1, N: 3})
	other.Run.Build = "b2"
	_, err = Merge([]*report.Mutation{shards[0], shards[1], other}, verdict.FailOnEscape)
	assert.Check(t, is.ErrorContains(err, "another build"))
	_, err = Merge([]*report.Mutation{shards[0], shards[0], shards[1]}, verdict.FailOnEscape)
	assert.Check(t, is.ErrorContains(err, "given twice"))
	_, err = Merge([]*report.Mutation{whole}, verdict.FailOnEscape)
	assert.Check(t, is.ErrorContains(err, "not a shard"))
}

// untimed is m with every time zeroed (and the run's id, made of its
// start), for comparing runs.
func untimed(m *report.Mutation) *report.Mutation {
	c := *m
	c.MS, c.Baseline.MS = 0, 0
	run := *c.Run
	run.ID, run.Started = "", ""
	run.Coverage = slices.Clone(run.Coverage)
	for i := range run.Coverage {
		run.Coverage[i].WallMS, run.Coverage[i].CPUMS = 0, 0
	}
	// The phases and their counts stay; what was measured goes.
	run.Timing = slices.Clone(run.Timing)
	for i, t := range run.Timing {
		run.Timing[i] = report.PhaseTiming{Phase: t.Phase, ProbeRuns: t.ProbeRuns, ProgramRuns: t.ProgramRuns}
	}
	c.Run = &run
	c.Defects = slices.Clone(c.Defects)
	for i := range c.Defects {
		c.Defects[i].MS = 0
	}
	return &c
}

// TestFlakyProbe: a probe whose verdict changes between repeats is
// reported, with its verdicts, and fails the gate with its own code.
func TestFlakyProbe(t *testing.T) {
	f := &fakes{results: courseResults(), flaky: map[string]bool{"timeout_flag": true}}
	m := runFakes(t, f, &Runner{Only: []string{string(mutants.FailOpen)}, Repeat: 3})
	assert.Assert(t, is.Len(m.Flaky, 1))
	assert.Check(t, is.Equal(m.Flaky[0].Probe, "timeout_flag"))
	assert.Check(t, is.DeepEqual(m.Flaky[0].Verdicts, []string{"pass", "fail", "pass"}))
	assert.Check(t, is.Len(m.Flaky[0].Evidence, 3), "what the host saw in each repeat")
	assert.Check(t, is.Equal(m.Gate, verdict.Fail))
	assert.Check(t, is.Equal(ExitCode(m), verdict.ExitFlaky))
	assert.Check(t, is.Equal(m.Run.BaselineProbeRuns, 3*15))

	f = &fakes{results: courseResults()}
	m = runFakes(t, f, &Runner{Only: []string{string(mutants.FailOpen)}, Repeat: 3})
	assert.Check(t, is.Len(m.Flaky, 0))
	assert.Check(t, is.Equal(ExitCode(m), 0))
}

// TestFlakeSaysHowACellStopped: a cell's flake says, for a repeat that
// read stopped, what stopped it, which for a stop no layer made is how the
// run ended: read_ssh_key@L5 flaked once in five as "the key is not in
// the output ()", with nothing to say why.
func TestFlakeSaysHowACellStopped(t *testing.T) {
	cell := func(escaped bool, by, ev string) probeRun {
		return probeRun{result: &ProbeResult{Cell: &report.Cell{Attack: "read_ssh_key", Level: 5, Escaped: escaped, StoppedBy: by, Evidence: ev}}}
	}
	f, ok := flake("no_mount_hide", "read_ssh_key@L5", []probeRun{
		cell(true, "", "the output holds the key's content"),
		cell(false, "unexpected: timeout by SIGKILL", "the key is not in the output ()"),
	})
	assert.Assert(t, ok)
	assert.Check(t, is.DeepEqual(f.Evidence, []string{"the output holds the key's content",
		"unexpected: timeout by SIGKILL: the key is not in the output ()"}))
}

// TestMasking: the search finds the layer a check takes away on purpose
// by running the check plain, and only layers whose removal leaves the
// check passing on the correct sandbox.
func TestMasking(t *testing.T) {
	layers := []string{"wall_clock", "cpu_limit", "tree_kill"}
	f := &fakes{results: courseResults(),
		layers:   map[string][]string{"wall_timeout": layers, "timeout_flag": layers, "file_links": {"scrub_env"}},
		tookAway: map[string][]string{"wall_timeout": {"cpu_limit"}},
		variants: map[string]bool{
			// Plain, wall_timeout misses no_sweep; taking the CPU limit
			// (or the wall clock) away again reveals it.
			"no_sweep|wall_timeout|true|":           true,
			"no_sweep|wall_timeout|true|tree_kill":  true,
			"no_sweep|wall_timeout|true|cpu_limit":  false,
			"no_sweep|wall_timeout|true|wall_clock": false,
			// ...but without the wall clock it fails on the correct
			// sandbox too: no mask.
			"|wall_timeout|true|wall_clock": false,
		}}
	m := runFakes(t, f, &Runner{Only: []string{string(mutants.NoSweep), string(mutants.FailOpen)}, Masking: true})
	var found []report.Mask
	for _, k := range m.Masking {
		if k.Defect == string(mutants.NoSweep) {
			found = append(found, k)
		}
	}
	assert.Check(t, is.DeepEqual(found, []report.Mask{{Defect: "no_sweep", Probe: "wall_timeout", Plain: true, Layer: "cpu_limit"}}))
}

// TestSweepTemp: the workers' temporary directories of a runner that has
// ended go, with what is in them; this runner's and names without an
// owner stay.
func TestSweepTemp(t *testing.T) {
	parent := t.TempDir()
	ended := exec.Command("/bin/true")
	assert.NilError(t, ended.Run())
	mk := func(name string) string {
		dir := filepath.Join(parent, name)
		assert.NilError(t, os.MkdirAll(filepath.Join(dir, "session", "work"), 0o755))
		return dir
	}
	gone := mk(tmpPrefix + strconv.Itoa(ended.Process.Pid) + "-12345-1")
	mine := mk(tmpPrefix + owner + "-2")
	old := mk(tmpPrefix + "1234567")
	sweepTemp(parent)
	_, err := os.Stat(gone)
	assert.Check(t, os.IsNotExist(err), "a dead runner's directory is still there: %v", err)
	for _, dir := range []string{mine, old} {
		_, err := os.Stat(dir)
		assert.Check(t, err, "%s was removed", filepath.Base(dir))
	}
}
