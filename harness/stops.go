package harness

import (
	"slices"
	"sync"

	"sandboxlab/report"
)

// stops gathers, over one mutation run, the probes' runs stopped at their
// time limit: how late each kill landed, by level, and which probes were
// starved of CPU. A nil *stops gathers nothing.
type stops struct {
	mu                                sync.Mutex
	baseline, defects                 map[int][]int64
	baselineInit, defectsInit         map[int][]int64 // the init's wake-up, of the runs it stopped
	baselineBackstop, defectsBackstop map[int]int
	latest                            map[int][]report.LateKill // trimmed to the latest as they come
	probes                            []report.StarvedProbe
}

func newStops() *stops {
	return &stops{baseline: map[int][]int64{}, defects: map[int][]int64{}, baselineInit: map[int][]int64{}, defectsInit: map[int][]int64{},
		baselineBackstop: map[int]int{}, defectsBackstop: map[int]int{}, latest: map[int][]report.LateKill{}}
}

// add records what the worker of task t reported; ranTwice is set when
// the probe's verdict was inconclusive and it runs once more (runTask).
func (s *stops) add(t Task, res *ProbeResult, ranTwice bool) {
	if s == nil || res == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	late, initLate, backstop := s.defects, s.defectsInit, s.defectsBackstop
	of := t.Defect
	if t.Defect == "" && t.Without == "" && !t.Plain {
		late, initLate, backstop = s.baseline, s.baselineInit, s.baselineBackstop
	} else if of == "" {
		of = "the masking search" // counted with the defects' runs
	}
	for _, to := range res.Timeouts {
		late[to.Level] = append(late[to.Level], to.LateMS)
		if to.InitLateMS != nil {
			initLate[to.Level] = append(initLate[to.Level], *to.InitLateMS)
		}
		if to.Backstop {
			backstop[to.Level]++
		}
		s.latest[to.Level] = report.KeepLatest(append(s.latest[to.Level], report.LateKill{Probe: t.Probe, Defect: of,
			LateMS: to.LateMS, InitLateMS: to.InitLateMS, Backstop: to.Backstop, Starved: to.Starved}))
	}
	if res.Starved > 0 || res.ClockStops > 0 || res.timedEscape() {
		s.probes = append(s.probes, report.StarvedProbe{Probe: t.Probe, Defect: t.Defect, Runs: res.Starved, ClockStops: res.ClockStops,
			TimedEscape: res.timedEscape(), RanTwice: ranTwice})
	}
}

// report is what was gathered, by level and in a stable order.
func (s *stops) report() ([]report.KillLate, []report.StarvedProbe) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var levels []int
	for l := range s.baseline {
		levels = append(levels, l)
	}
	for l := range s.defects {
		if _, ok := s.baseline[l]; !ok {
			levels = append(levels, l)
		}
	}
	slices.Sort(levels)
	var kl []report.KillLate
	for _, l := range levels {
		kl = append(kl, report.KillLate{Level: l, BaselineMS: sorted(s.baseline[l]), DefectsMS: sorted(s.defects[l]),
			BaselineInitMS: sortedOrNil(s.baselineInit[l]), DefectsInitMS: sortedOrNil(s.defectsInit[l]),
			BaselineBackstop: s.baselineBackstop[l], DefectsBackstop: s.defectsBackstop[l], Latest: slices.Clone(s.latest[l])})
	}
	probes := slices.Clone(s.probes)
	slices.SortStableFunc(probes, func(a, b report.StarvedProbe) int { return starvedOrder(a.Defect) - starvedOrder(b.Defect) })
	return kl, probes
}

// sorted is a sorted copy of v, never nil.
func sorted(v []int64) []int64 {
	if v == nil {
		return []int64{}
	}
	c := slices.Clone(v)
	slices.Sort(c)
	return c
}

// sortedOrNil is a sorted copy of v, nil when v is empty (the levels and
// runs with no init to stop them).
func sortedOrNil(v []int64) []int64 {
	if len(v) == 0 {
		return nil
	}
	return sorted(v)
}

// starvedOrder puts the baseline's starved probes first, then the
// defects' in registry order.
func starvedOrder(defect string) int {
	if defect == "" {
		return -1
	}
	return defectIndex(defect)
}
