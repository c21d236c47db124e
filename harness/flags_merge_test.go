package harness

import (
	"fmt"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/attacks"
	"sandboxlab/report"
)

// flagShard is shard k/n of a made-up flag mutation of 7 mutants.
func flagShard(k, n int) *report.FlagMutation {
	f := &report.FlagMutation{Profile: "box", Command: []string{"bwrap", "--"}, Baseline: report.FlagBaseline{OK: true, Stopped: []string{"exfiltrate"}},
		Run: report.FlagRun{Shard: fmt.Sprintf("%d/%d", k, n), Repeat: 1, Build: "b"}}
	for i := range 7 {
		if i%n == k-1 {
			f.Mutants = append(f.Mutants, report.FlagMutant{ID: fmt.Sprintf("m%d", i)})
			f.Run.CellRuns++
			f.Run.CellRunsUnselected += 3
		}
	}
	return f
}

// TestMergeFlags: the shards of a flag mutation merge into the mutants of
// the whole run, in its order, their counts summed; shards of another
// split, another profile or other baselines are refused.
func TestMergeFlags(t *testing.T) {
	m, err := MergeFlags([]*report.FlagMutation{flagShard(2, 3), flagShard(1, 3), flagShard(3, 3)})
	assert.NilError(t, err)
	var ids []string
	for _, mu := range m.Mutants {
		ids = append(ids, mu.ID)
	}
	assert.Check(t, is.DeepEqual(ids, []string{"m0", "m1", "m2", "m3", "m4", "m5", "m6"}))
	assert.Check(t, is.Equal(m.Run.CellRuns, 7))
	assert.Check(t, is.Equal(m.Run.CellRunsUnselected, 21))
	assert.Check(t, is.Equal(m.Run.Shard, ""))
	_, err = MergeFlags([]*report.FlagMutation{flagShard(1, 3), flagShard(2, 3)})
	assert.Check(t, is.ErrorContains(err, "missing shards: 3/3"))
	other := flagShard(2, 2)
	other.Baseline.Stopped = nil
	_, err = MergeFlags([]*report.FlagMutation{flagShard(1, 2), other})
	assert.Check(t, is.ErrorContains(err, "stop other attacks"))
	other = flagShard(2, 2)
	other.Command = []string{"bwrap", "--unshare-net", "--"}
	_, err = MergeFlags([]*report.FlagMutation{flagShard(1, 2), other})
	assert.Check(t, is.ErrorContains(err, "other profiles"))
}

// TestEveryAttackHasASeverity: SARIF's rules give each attack its
// class's security-severity; a new attack must be filed under a class.
func TestEveryAttackHasASeverity(t *testing.T) {
	for _, a := range attacks.All() {
		_, ok := report.ClassOf(a.ID)
		assert.Check(t, ok, "attack %s has no class in report/sarif.go's attackClasses", a.ID)
	}
}

// TestCellFlakes: a cell whose state changes between repeats is a flake,
// and so is a probe that starts the sandbox in one repeat and not in
// another; steady cells are not.
func TestCellFlakes(t *testing.T) {
	col := func(skipped string, states ...report.CellState) columnRun {
		rep := &report.Sandboxes{Sandboxes: []report.Sandbox{{Name: "box", Skipped: skipped}}}
		if skipped == "" {
			for i, s := range states {
				rep.Cells = append(rep.Cells, report.SandboxCell{Attack: []string{"a", "b"}[i], Sandbox: "box", State: s})
			}
		}
		return columnRun{rep: rep}
	}
	steady := []columnRun{col("", report.Stopped, report.Escaped), col("", report.Stopped, report.Escaped)}
	assert.Check(t, is.Len(cellFlakes("m", steady, nil), 0))
	flips := []columnRun{col("", report.Stopped, report.Escaped), col("", report.Escaped, report.Escaped)}
	assert.Check(t, is.DeepEqual(cellFlakes("m", flips, nil), []report.FlagFlake{{Mutant: "m", Attack: "a", States: []string{"stopped", "escaped"}}}))
	assert.Check(t, is.Len(cellFlakes("m", flips, []string{"b"}), 0))
	probe := []columnRun{col("", report.Stopped, report.Escaped), col("it did not run the probe")}
	fl := cellFlakes("m", probe, nil)
	assert.Assert(t, len(fl) > 0)
	assert.Check(t, is.DeepEqual(fl[0], report.FlagFlake{Mutant: "m", Attack: "probe", States: []string{"ran", "unviable"}}))
}
