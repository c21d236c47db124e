package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"

	"sandboxlab/mutants"
	"sandboxlab/report"
)

// ShardTimes are the defects' probe times from an earlier run's report
// (mutate --shard-times FILE): with them the shards are cut by time, so
// that a CI matrix's shards finish together, where every N-th defect
// gives one shard the heavy limit defects that sit together.
type ShardTimes struct {
	// MS is each defect's probe time in the earlier run, summed
	// (report.Defect.MS).
	MS map[string]int64
	// Digest names the times, so that shards cut from other times are
	// refused at merge.
	Digest string
}

// ReadShardTimes reads the defects' probe times from the JSON report of
// an earlier mutate run, whole or merged.
func ReadShardTimes(path string) (*ShardTimes, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m report.Mutation
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: not a mutate JSON report: %w", path, err)
	}
	if len(m.Defects) == 0 {
		return nil, fmt.Errorf("%s: the report has no defects to take times from", path)
	}
	st := &ShardTimes{MS: map[string]int64{}}
	for _, d := range m.Defects {
		st.MS[d.ID] = d.MS
	}
	ids := make([]string, 0, len(st.MS))
	for id := range st.MS {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	h := sha256.New()
	for _, id := range ids {
		fmt.Fprintf(h, "%s %d\n", id, st.MS[id])
	}
	st.Digest = hex.EncodeToString(h.Sum(nil))[:16]
	return st, nil
}

// Cut assigns each defect of list to one of n shards by the times, the
// longest first, each to the shard with the least time so far (the
// lowest-numbered on a tie): the longest-processing-time rule, which
// comes within 4/3 of the best split. A defect the times lack (added
// since) counts as their mean. It returns each defect's shard, 0 to n-1,
// by index in list; every shard computes the same cut from the same
// times.
func (st *ShardTimes) Cut(list []mutants.Defect, n int) []int {
	cost := make([]int64, len(list))
	var sum, known int64
	for _, d := range list {
		if ms, ok := st.MS[string(d.ID)]; ok {
			sum += ms
			known++
		}
	}
	mean := int64(1)
	if known > 0 {
		mean = max(1, sum/known)
	}
	for i, d := range list {
		if ms, ok := st.MS[string(d.ID)]; ok {
			cost[i] = ms
		} else {
			cost[i] = mean
		}
	}
	order := make([]int, len(list))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case cost[a] > cost[b]:
			return -1
		case cost[a] < cost[b]:
			return 1
		}
		return a - b
	})
	load := make([]int64, n)
	shard := make([]int, len(list))
	for _, i := range order {
		k := 0
		for j := 1; j < n; j++ {
			if load[j] < load[k] {
				k = j
			}
		}
		shard[i] = k
		load[k] += cost[i]
	}
	return shard
}

// digest is the times' digest, "" for none. Nil-safe.
func (st *ShardTimes) digest() string {
	if st == nil {
		return ""
	}
	return st.Digest
}

// shardOf returns the defects of list in the run's shard, in list's
// order: every N-th, or by the shard times when the run has them.
func (r *Runner) shardOf(list []mutants.Defect) []mutants.Defect {
	if r.Shard.N == 0 {
		return list
	}
	var owner []int
	if r.ShardTimes != nil {
		owner = r.ShardTimes.Cut(list, r.Shard.N)
	}
	var mine []mutants.Defect
	for i, d := range list {
		if (owner == nil && r.Shard.has(i)) || (owner != nil && owner[i] == r.Shard.K-1) {
			mine = append(mine, d)
		}
	}
	return mine
}
