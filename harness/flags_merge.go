package harness

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"sandboxlab/report"
)

// MergeFlags combines the reports of the shards of one flag mutation
// (mutate --sandbox NAME --shard K/N, K = 1 to N, each once) into the
// report of the unsharded run: the first shard's baseline and every
// shard's mutants in the order of the profile's groups. Shards of
// another profile command, build or repeat count are refused, and so are
// shards whose baselines disagree on an attack: each shard ran the
// baseline itself, and a disagreement is a flake to look at.
func MergeFlags(shards []*report.FlagMutation) (*report.FlagMutation, error) {
	if len(shards) == 0 {
		return nil, errors.New("no shards")
	}
	specs := make([]string, len(shards))
	for i, s := range shards {
		specs[i] = s.Run.Shard
	}
	if err := shardSet(specs); err != nil {
		return nil, err
	}
	first := shards[0]
	for _, s := range shards[1:] {
		if err := sameFlagRun(first, s); err != nil {
			return nil, fmt.Errorf("shard %s and shard %s: %w", first.Run.Shard, s.Run.Shard, err)
		}
	}
	m := *first
	m.Run.Shard, m.Run.CellRuns, m.Run.CellRunsUnselected = "", 0, 0
	m.Mutants, m.Flaky = []report.FlagMutant{}, nil
	for _, f := range first.Flaky {
		if f.Mutant == "" {
			m.Flaky = append(m.Flaky, f)
		}
	}
	for _, s := range shards {
		m.Mutants = append(m.Mutants, s.Mutants...)
		m.Run.CellRuns += s.Run.CellRuns
		m.Run.CellRunsUnselected += s.Run.CellRunsUnselected
		m.MS = max(m.MS, s.MS)
		for _, f := range s.Flaky {
			if f.Mutant != "" {
				m.Flaky = append(m.Flaky, f)
			}
		}
	}
	// The mutants in the order the unsharded run lists them: by group,
	// then by the operators' order within it (their order in a shard).
	order := map[string]int{}
	for _, s := range shards {
		for i, mu := range s.Mutants {
			order[mu.ID] = i*len(shards) + shardIndex(s.Run.Shard)
		}
	}
	slices.SortStableFunc(m.Mutants, func(a, b report.FlagMutant) int { return order[a.ID] - order[b.ID] })
	return &m, nil
}

// shardIndex is K-1 of "K/N".
func shardIndex(spec string) int {
	sh, _ := ParseShard(spec)
	return sh.K - 1
}

// sameFlagRun reports how two shards' runs differ, if they do.
func sameFlagRun(a, b *report.FlagMutation) error {
	switch {
	case a.Profile != b.Profile || !slices.Equal(a.Command, b.Command):
		return fmt.Errorf("other profiles (%s: %s; %s: %s)", a.Profile, strings.Join(a.Command, " "), b.Profile, strings.Join(b.Command, " "))
	case a.Run.Build != b.Run.Build:
		return fmt.Errorf("another build (%s, %s)", a.Run.Build, b.Run.Build)
	case a.Run.Repeat != b.Run.Repeat || !slices.Equal(a.Run.Only, b.Run.Only):
		return errors.New("other settings (repeat or --only)")
	case a.Baseline.OK != b.Baseline.OK:
		return errors.New("one baseline did not run, the other did")
	case !slices.Equal(a.Baseline.Stopped, b.Baseline.Stopped):
		return fmt.Errorf("their baselines stop other attacks (%s; %s): a flake to look at (--repeat)",
			strings.Join(a.Baseline.Stopped, ", "), strings.Join(b.Baseline.Stopped, ", "))
	}
	return nil
}
