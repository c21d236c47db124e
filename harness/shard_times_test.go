package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/mutants"
	"sandboxlab/report"
	"sandboxlab/verdict"
)

// TestShardTimesCut: cut by times, each defect is in one shard, the
// shards' loads differ by no more than the longest defect, and the cut
// is the same every time. Where the slow defects sit together, as the
// course's limit defects do, every N-th defect is the worse split.
func TestShardTimesCut(t *testing.T) {
	list := mutants.All[:24]
	st := &ShardTimes{MS: map[string]int64{}}
	for i, d := range list {
		ms := int64(5_000)
		if i >= 9 && i < 15 { // a run of heavy ones, as no_cpu_limit and its neighbours
			ms = 120_000
		}
		st.MS[string(d.ID)] = ms
	}
	delete(st.MS, string(list[3].ID)) // added since the times were taken: the mean
	const n = 4
	owner := st.Cut(list, n)
	assert.Check(t, is.DeepEqual(owner, st.Cut(list, n)), "the cut changed between calls")
	byTimes, everyNth := make([]int64, n), make([]int64, n)
	var longest int64
	for i, d := range list {
		ms, ok := st.MS[string(d.ID)]
		if !ok {
			ms = 53_333 // (18*5,000 + 6*120,000 - 5,000) / 23
		}
		longest = max(longest, ms)
		assert.Assert(t, owner[i] >= 0 && owner[i] < n)
		byTimes[owner[i]] += ms
		everyNth[i%n] += ms
	}
	assert.Check(t, slices.Max(byTimes)-slices.Min(byTimes) <= longest, "loads %v", byTimes)
	assert.Check(t, slices.Max(byTimes) < slices.Max(everyNth), "by times %v, every N-th %v", byTimes, everyNth)
}

// TestShardsByTimesMerge: shards cut by times merge into the unsharded
// run; shards cut by other times are refused.
func TestShardsByTimesMerge(t *testing.T) {
	results := courseResults()
	only := []string{string(mutants.FailOpen), string(mutants.TimeoutHidden), string(mutants.CapsKept), string(mutants.NoNetNS), string(mutants.NoSweep)}
	path := filepath.Join(t.TempDir(), "earlier.json")
	earlier := report.Mutation{Defects: []report.Defect{{ID: string(mutants.FailOpen), MS: 90_000}, {ID: string(mutants.CapsKept), MS: 80_000},
		{ID: string(mutants.TimeoutHidden), MS: 1_000}, {ID: string(mutants.NoNetNS), MS: 1_000}, {ID: string(mutants.NoSweep), MS: 1_000}}}
	b, err := json.Marshal(earlier)
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(path, b, 0o600))
	times, err := ReadShardTimes(path)
	assert.NilError(t, err)
	run := func(shard Shard, st *ShardTimes) *report.Mutation {
		return runFakes(t, &fakes{results: results}, &Runner{Only: only, Shard: shard, ShardTimes: st, Build: "b1", PredictionsDigest: "p1"})
	}
	whole := run(Shard{}, nil)
	var shards []*report.Mutation
	var ids [][]string
	for k := 1; k <= 2; k++ {
		s := run(Shard{K: k, N: 2}, times)
		assert.Check(t, is.Equal(s.Run.ShardTimes, times.Digest))
		var got []string
		for _, d := range s.Defects {
			got = append(got, d.ID)
		}
		ids = append(ids, got)
		shards = append(shards, s)
	}
	// The two heavy ones apart, the light ones with the lighter.
	assert.Check(t, is.DeepEqual(ids, [][]string{{string(mutants.FailOpen)},
		{string(mutants.TimeoutHidden), string(mutants.NoSweep), string(mutants.NoNetNS), string(mutants.CapsKept)}}))
	merged, err := Merge(shards, verdict.FailOnEscape)
	assert.NilError(t, err)
	merged.Run.ShardTimes = ""
	assert.Check(t, is.DeepEqual(untimed(merged), untimed(whole)))

	other := run(Shard{K: 2, N: 2}, nil)
	_, err = Merge([]*report.Mutation{shards[0], other}, verdict.FailOnEscape)
	assert.Check(t, is.ErrorContains(err, "shards cut from other times"))
}
