package harness

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"sandboxlab/report"
	"sandboxlab/verdict"
)

// Merge combines the reports of the shards of one run (mutate --shard
// K/N, for K = 1 to N, each once) into the report of the unsharded run:
// the first shard's baseline, every shard's defects in registry order,
// and the summaries and gates decided again under failOn. Shards from
// other predictions, another build, other suites or other settings are
// refused, and so are shards whose baselines disagree: each shard ran the
// baseline itself, and a verdict that changes between two runs of the same
// probe is a flake to look at, not something to merge over.
func Merge(shards []*report.Mutation, failOn verdict.FailOn) (*report.Mutation, error) {
	if len(shards) == 0 {
		return nil, errors.New("no shards")
	}
	first := shards[0]
	if first.Run == nil {
		return nil, errors.New("shard 1: the report says nothing of how it was run (made before sharding?)")
	}
	specs := make([]string, len(shards))
	for i, s := range shards {
		if s.Run == nil {
			return nil, fmt.Errorf("report %d says nothing of how it was run", i+1)
		}
		specs[i] = s.Run.Shard
	}
	if err := shardSet(specs); err != nil {
		return nil, err
	}
	for _, s := range shards[1:] {
		if err := sameRun(first, s); err != nil {
			return nil, fmt.Errorf("shard %s and shard %s: %w", first.Run.Shard, s.Run.Shard, err)
		}
	}
	run := mergedRun(shards)
	m := &report.Mutation{Identity: first.Identity, Baseline: first.Baseline, Jobs: first.Jobs, Run: &run, Defects: []report.Defect{}}
	for _, s := range first.Suites {
		m.Suites = append(m.Suites, report.SuiteResult{Suite: s.Suite, BaselineOK: s.BaselineOK, Problems: s.Problems})
	}
	baseFlakes := map[string]bool{}
	for _, s := range shards {
		m.Defects = append(m.Defects, s.Defects...)
		m.Masking = append(m.Masking, s.Masking...)
		run.ProbeRuns += s.Run.ProbeRuns
		run.ProbeRunsUnselected += s.Run.ProbeRunsUnselected
		m.MS = max(m.MS, s.MS)
		for _, f := range s.Flaky {
			if f.Defect == "" && !baseFlakes[f.Probe] {
				baseFlakes[f.Probe] = true
				m.Flaky = append(m.Flaky, f)
			}
		}
	}
	slices.SortStableFunc(m.Defects, func(a, b report.Defect) int { return defectIndex(a.ID) - defectIndex(b.ID) })
	slices.SortStableFunc(m.Masking, func(a, b report.Mask) int { return defectIndex(a.Defect) - defectIndex(b.Defect) })
	for _, d := range m.Defects {
		m.Flaky = append(m.Flaky, d.Flaky...)
	}
	finish(m, failOn)
	return m, nil
}

// shardSet checks that specs (each report's --shard) are the shards
// K/N of one split, K = 1 to N, each once.
func shardSet(specs []string) error {
	var n int
	if _, err := fmt.Sscanf(specs[0], "%d/%d", new(int), &n); err != nil {
		return fmt.Errorf("the first report is not a shard (run with --shard K/N): %q", specs[0])
	}
	seen := map[int]bool{}
	for i, spec := range specs {
		sh, err := ParseShard(spec)
		if err != nil {
			return fmt.Errorf("report %d is not a shard: %v", i+1, err)
		}
		switch {
		case sh.N != n:
			return fmt.Errorf("report %d is shard %s, of another split than %d", i+1, sh, n)
		case seen[sh.K]:
			return fmt.Errorf("shard %s is given twice", sh)
		}
		seen[sh.K] = true
	}
	if len(seen) != n {
		var missing []string
		for k := 1; k <= n; k++ {
			if !seen[k] {
				missing = append(missing, fmt.Sprintf("%d/%d", k, n))
			}
		}
		return fmt.Errorf("missing shards: %s", strings.Join(missing, ", "))
	}
	return nil
}

// mergedRun is how the shards' run was made: the first shard's account,
// its probe runs counted again from the shards' below, and what the
// shards reused added up.
func mergedRun(shards []*report.Mutation) report.RunInfo {
	first := shards[0]
	run := *first.Run
	run.Shard, run.ProbeRuns, run.ProbeRunsUnselected = "", 0, 0
	// Shards measured on other hosts, or by binaries of other sources,
	// cannot vouch as one for what a later run would reuse.
	for _, s := range shards[1:] {
		if !reflect.DeepEqual(s.Run.Inputs, first.Run.Inputs) {
			run.Inputs = nil
		}
	}
	if first.Run.Reused != nil {
		reused := *first.Run.Reused
		reused.ProbeRuns, reused.Defects, reused.Rejudged = 0, 0, nil
		for _, s := range shards {
			reused.ProbeRuns += s.Run.Reused.ProbeRuns
			reused.Defects += s.Run.Reused.Defects
			reused.Rejudged = append(reused.Rejudged, s.Run.Reused.Rejudged...)
		}
		slices.SortStableFunc(reused.Rejudged, func(a, b string) int { return defectIndex(a) - defectIndex(b) })
		run.Reused = &reused
	}
	run.KillLate, run.Starved = mergedStops(shards)
	run.Timing = mergedTiming(shards)
	return run
}

// mergedTiming is the first shard's baseline phase and the sum of every
// shard's other phases, in the order the first shard ran them.
func mergedTiming(shards []*report.Mutation) []report.PhaseTiming {
	var out []report.PhaseTiming
	at := map[string]int{}
	for _, s := range shards {
		for _, t := range s.Run.Timing {
			j, ok := at[t.Phase]
			switch {
			case !ok:
				at[t.Phase] = len(out)
				out = append(out, t)
			case t.Phase == report.PhaseBaseline:
				// every shard ran it; the merged report keeps the first's
			default:
				out[j] = addTiming(out[j], t)
			}
		}
	}
	return out
}

func addTiming(a, b report.PhaseTiming) report.PhaseTiming {
	a.ElapsedMS += b.ElapsedMS
	a.HarnessCPUMS += b.HarnessCPUMS
	a.ProbeRuns += b.ProbeRuns
	a.ProbeWallMS += b.ProbeWallMS
	a.WorkerTotalCPUMS += b.WorkerTotalCPUMS
	a.WorkerStartCPUMS += b.WorkerStartCPUMS
	a.WorkerCPUMS += b.WorkerCPUMS
	a.HelperCPUMS += b.HelperCPUMS
	a.ProgramCPUMS += b.ProgramCPUMS
	a.ProgramRuns += b.ProgramRuns
	a.ProgramWallMS += b.ProgramWallMS
	a.InitSetupMS += b.InitSetupMS
	return a
}

// mergedStops are the shards' timeouts as one run's: the first shard's
// baseline (every shard ran it; the merged report keeps the first's) and
// every shard's defects.
func mergedStops(shards []*report.Mutation) ([]report.KillLate, []report.StarvedProbe) {
	byLevel := map[int]*report.KillLate{}
	var levels []int
	var starved []report.StarvedProbe
	for i, s := range shards {
		for _, k := range s.Run.KillLate {
			m := byLevel[k.Level]
			if m == nil {
				m = &report.KillLate{Level: k.Level, BaselineMS: []int64{}, DefectsMS: []int64{}}
				byLevel[k.Level] = m
				levels = append(levels, k.Level)
			}
			if i == 0 {
				m.BaselineMS, m.BaselineInitMS, m.BaselineBackstop = k.BaselineMS, k.BaselineInitMS, k.BaselineBackstop
			}
			m.DefectsMS = append(m.DefectsMS, k.DefectsMS...)
			m.DefectsInitMS = append(m.DefectsInitMS, k.DefectsInitMS...)
			m.DefectsBackstop += k.DefectsBackstop
			for _, lk := range k.Latest {
				if lk.Defect != "" || i == 0 {
					m.Latest = append(m.Latest, lk)
				}
			}
		}
		for _, p := range s.Run.Starved {
			if p.Defect != "" || i == 0 {
				starved = append(starved, p)
			}
		}
	}
	slices.Sort(levels)
	var kl []report.KillLate
	for _, l := range levels {
		slices.Sort(byLevel[l].DefectsMS)
		slices.Sort(byLevel[l].DefectsInitMS)
		byLevel[l].Latest = report.KeepLatest(byLevel[l].Latest)
		kl = append(kl, *byLevel[l])
	}
	slices.SortStableFunc(starved, func(a, b report.StarvedProbe) int { return starvedOrder(a.Defect) - starvedOrder(b.Defect) })
	return kl, starved
}

// sameRun reports how two shards' runs differ, if they do.
func sameRun(a, b *report.Mutation) error {
	ra, rb := a.Run, b.Run
	switch {
	case ra.Build != rb.Build:
		return fmt.Errorf("another build (%s, %s)", ra.Build, rb.Build)
	case ra.Predictions != rb.Predictions:
		return fmt.Errorf("other predictions (%s, %s)", ra.Predictions, rb.Predictions)
	case !slices.Equal(ra.Suites, rb.Suites):
		return fmt.Errorf("other suites (%s, %s)", verdict.SuiteList(ra.Suites), verdict.SuiteList(rb.Suites))
	case ra.ShardTimes != rb.ShardTimes:
		return fmt.Errorf("shards cut from other times (--shard-times: %q, %q)", ra.ShardTimes, rb.ShardTimes)
	case ra.Selection != rb.Selection || ra.Repeat != rb.Repeat:
		return errors.New("other settings (selection or repeat)")
	case !reflect.DeepEqual(ra.Partial, rb.Partial):
		return errors.New("other diffs (--since)")
	case (ra.Reused == nil) != (rb.Reused == nil) || (ra.Reused != nil && ra.Reused.From != rb.Reused.From):
		return errors.New("one reused another run's verdicts than the other (--incremental)")
	case a.Baseline.OK != b.Baseline.OK:
		return errors.New("one baseline is broken, the other not")
	}
	if a.Baseline.Checks == nil || b.Baseline.Checks == nil || a.Baseline.Attacks == nil || b.Baseline.Attacks == nil {
		return nil // a failed baseline run: nothing more to compare
	}
	verdicts := func(m *report.Mutation) map[string]string {
		out := map[string]string{}
		for _, c := range m.Baseline.Checks.Checks {
			out[c.ID] = fmt.Sprint(c.Passed)
		}
		for _, c := range m.Baseline.Attacks.Cells {
			out[c.Name()] = fmt.Sprint(c.Escaped)
		}
		return out
	}
	va, vb := verdicts(a), verdicts(b)
	for p, v := range va {
		if vb[p] != v {
			return fmt.Errorf("their baselines disagree on %s: a flake to look at (mutate --repeat)", p)
		}
	}
	if len(va) != len(vb) {
		return errors.New("their baselines ran other probes")
	}
	return nil
}
