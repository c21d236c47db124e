package harness

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"time"

	"sandboxlab/mutants"
	"sandboxlab/report"
	"sandboxlab/sandbox/evidence"
)

// workResult is a whole run's result (the baseline's or a defect's) and
// what it cost.
type workResult struct {
	result *WorkerResult
	ms     int64 // the probes' wall times, summed
	hung   bool
}

// errHung marks a probe that ran past its time.
var errHung = errors.New("hung")

// baseRun is what the baseline measured: its result, and for every probe
// the planted sites it reaches and what it costs.
type baseRun struct {
	work    workResult
	reached map[string]map[string]bool // probe -> defect ids whose sites it asked
	weight  map[string]float64         // probe -> the share of a CPU it used
	wall    map[string]time.Duration   // probe -> its wall time
	// layers and tookAway are each probe's layers and the layers it takes
	// away on purpose (see ProbeResult).
	layers, tookAway map[string][]string
	flaky            []report.Flake
	// runs counts the probe runs made, reused those taken from an
	// earlier run; results is each probe's result (the first repeat's).
	runs, reused int
	coverage     []report.ProbeCoverage
	results      map[string]*ProbeResult
	// kept holds the probes whose result was taken from an earlier run.
	kept map[string]bool
}

// reaches reports whether probe reached defect's site in the baseline.
func (b *baseRun) reaches(probe string, defect mutants.ID) bool {
	return b.reached[probe][string(defect)]
}

// baselineWeight is what a probe weighs in the pool before its baseline
// run has measured it; idleWeight what a probe whose program runs at the
// lowest priority weighs (Runner.Idle): the harness's and the sandbox's
// share of it, however much CPU it used when nothing else wanted any.
const (
	baselineWeight = 0.65
	idleWeight     = 0.1
)

// idle reports whether probe's program runs at the lowest priority.
func (r *Runner) idle(probe string) bool { return r.Idle != nil && r.Idle(probe) }

// repeats is how many times each probe runs.
func (r *Runner) repeats() int { return max(1, r.Repeat) }

// runBaseline runs every probe on the correct sandbox, recording the
// sites each reaches, Repeat times; a probe ru may reuse is taken from
// the earlier run instead.
func (r *Runner) runBaseline(ctx context.Context, pl *pool, probes []Probe, prog *progressor, ru *reuse) (*baseRun, error) {
	b := &baseRun{reached: map[string]map[string]bool{}, weight: map[string]float64{}, wall: map[string]time.Duration{},
		layers: map[string][]string{}, tookAway: map[string][]string{}, results: map[string]*ProbeResult{}, kept: map[string]bool{}}
	n := r.repeats()
	runs := make([][]probeRun, len(probes))
	for i, p := range probes {
		runs[i] = make([]probeRun, n)
		if res, cov, ok := ru.baseline(p); ok {
			b.kept[p.ID] = true
			for k := range n {
				runs[i][k] = probeRun{result: res, reused: true,
					wall: time.Duration(cov.WallMS) * time.Millisecond, cpu: time.Duration(cov.CPUMS) * time.Millisecond}
			}
		}
	}
	b.reused = len(b.kept) * n
	prog.update(func(p *Progress) { p.Phase, p.ProbesDone, p.ProbesTotal = PhaseBaseline, 0, len(probes)*n-b.reused })
	var wg sync.WaitGroup
	for i, p := range probes {
		if b.kept[p.ID] {
			continue
		}
		for k := range n {
			// Nothing is known yet of what a probe costs: each counts as
			// most of a core, three at once on two cores, as busy as the
			// course's checks were made to hold.
			w := baselineWeight
			if r.idle(p.ID) {
				w = idleWeight
			}
			t := pl.enqueue(w)
			wg.Add(1)
			go func() {
				defer wg.Done()
				release, err := pl.wait(ctx, t)
				if err != nil {
					runs[i][k] = probeRun{err: err}
					return
				}
				runs[i][k] = r.runTask(ctx, Task{Probe: p.ID, Cover: true, Repeat: k}, pl, release)
				release()
				prog.update(func(p *Progress) { p.ProbesDone++ })
			}()
		}
	}
	wg.Wait()
	b.runs = len(probes)*n - b.reused
	if err := r.collectBaseline(b, probes, runs); err != nil {
		return b, err
	}
	b.work.result = r.assemble("", probes, b.results, nil)
	return b, nil
}

// collectBaseline records in b what each probe's runs measured: the
// sites it reached, its weight and cost, its result and its flakes; the
// error is the first run's that failed.
func (r *Runner) collectBaseline(b *baseRun, probes []Probe, runs [][]probeRun) error {
	var errs []error
	for i, p := range probes {
		reached := map[string]bool{}
		var cpu, wall time.Duration
		for _, pr := range runs[i] {
			if !pr.reused {
				b.work.ms += pr.wall.Milliseconds()
			}
			b.work.hung = b.work.hung || pr.hung
			if pr.err != nil {
				errs = append(errs, pr.err)
				continue
			}
			for _, id := range pr.result.Reached {
				reached[id] = true
			}
			cpu, wall = cpu+pr.cpu, wall+pr.wall
		}
		b.reached[p.ID] = reached
		if wall > 0 {
			b.weight[p.ID], b.wall[p.ID] = cpu.Seconds()/wall.Seconds(), wall/time.Duration(len(runs[i]))
			if r.idle(p.ID) {
				b.weight[p.ID] = idleWeight
			}
		}
		row := report.ProbeCoverage{Probe: p.ID, Reached: []string{}, WallMS: b.wall[p.ID].Milliseconds(),
			CPUMS: (cpu / time.Duration(len(runs[i]))).Milliseconds()}
		for _, d := range mutants.All {
			if reached[string(d.ID)] {
				row.Reached = append(row.Reached, string(d.ID))
			}
		}
		b.coverage = append(b.coverage, row)
		if len(errs) == 0 {
			b.results[p.ID] = runs[i][0].result
			b.layers[p.ID], b.tookAway[p.ID] = runs[i][0].result.Layers, runs[i][0].result.TookAway
			if f, ok := flake("", p.ID, runs[i]); ok {
				b.flaky = append(b.flaky, f)
			}
		}
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// flake returns the flake of probe under defect when the verdicts of its
// repeats differ.
func flake(defect, probe string, runs []probeRun) (report.Flake, bool) {
	f := report.Flake{Defect: defect, Probe: probe}
	for _, pr := range runs {
		f.Verdicts = append(f.Verdicts, pr.result.verdict())
		f.Evidence = append(f.Evidence, pr.result.evidence())
	}
	for _, v := range f.Verdicts {
		if v != f.Verdicts[0] {
			return f, true
		}
	}
	return report.Flake{}, false
}

// defectRun is one defect's probes under way.
type defectRun struct {
	d        mutants.Defect
	suite    []Probe  // its suite's probes
	reached  []string // those that reach its site
	selected []Probe  // those it runs
	runs     map[string][]probeRun
	// reused holds the selected probes whose results with the defect on
	// were taken from an earlier run: they do not run.
	reused map[string]*ProbeResult
	left   int // tasks not finished
	// untestable says why this host cannot test the defect ("": it can);
	// such a defect runs nothing.
	untestable string
}

// task is one run of one probe for one defect.
type task struct {
	dr    *defectRun
	probe Probe
	k     int // the repeat
}

// runDefects runs the selected probes of each defect, all defects' tasks
// sharing the pool, longest first (so that the run does not end waiting
// on one slow probe), and returns the judged defects in registry order.
func (r *Runner) runDefects(ctx context.Context, pl *pool, list []mutants.Defect, probes []Probe, base *baseRun, m *report.Mutation, prog *progressor, ru *reuse) []report.Defect {
	n := r.repeats()
	drs := make([]*defectRun, len(list))
	var tasks []task
	for i, d := range list {
		dr, more := r.planDefect(d, probes, base, ru)
		tasks = append(tasks, more...)
		m.Run.ProbeRuns += dr.left
		m.Run.ProbeRunsUnselected += len(dr.suite) * n
		drs[i] = dr
	}
	sort.SliceStable(tasks, func(i, j int) bool { return base.wall[tasks[i].probe.ID] > base.wall[tasks[j].probe.ID] })

	out := make([]report.Defect, len(list))
	done := 0
	var mu sync.Mutex
	finishDefect := func(i int) {
		out[i] = r.judgeDefect(drs[i], base)
		done++
		d := out[i]
		prog.update(func(p *Progress) { p.Done, p.Defect = done, d })
	}
	prog.update(func(p *Progress) {
		p.Phase, p.Done, p.Total, p.ProbesDone, p.ProbesTotal = PhaseDefects, 0, len(list), 0, len(tasks)
	})
	index := map[*defectRun]int{}
	for i, dr := range drs {
		index[dr] = i
		if dr.left == 0 {
			mu.Lock()
			finishDefect(i)
			mu.Unlock()
		}
	}
	var wg sync.WaitGroup
	for _, t := range tasks {
		tk := pl.enqueue(base.weight[t.probe.ID])
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := pl.wait(ctx, tk)
			var pr probeRun
			if err != nil {
				pr = probeRun{err: err}
			} else {
				pr = r.runTask(ctx, Task{Probe: t.probe.ID, Defect: string(t.dr.d.ID), Repeat: t.k}, pl, release)
				release()
			}
			mu.Lock()
			defer mu.Unlock()
			t.dr.runs[t.probe.ID][t.k] = pr
			t.dr.left--
			prog.update(func(p *Progress) { p.ProbesDone++ })
			if t.dr.left == 0 && ctx.Err() == nil {
				finishDefect(index[t.dr])
			}
		}()
	}
	wg.Wait()
	for _, d := range out {
		m.Flaky = append(m.Flaky, d.Flaky...)
	}
	return out
}

// planDefect returns defect d's run and its tasks: the probes of its
// suite that reach its site and whose verdicts can depend on its layer
// (Probe.touches; all of them with NoSelect), but those whose results
// with it on ru may reuse; nothing for a defect this host cannot test.
func (r *Runner) planDefect(d mutants.Defect, probes []Probe, base *baseRun, ru *reuse) (*defectRun, []task) {
	n := r.repeats()
	dr := &defectRun{d: d, runs: map[string][]probeRun{}, reused: map[string]*ProbeResult{}, untestable: evidence.Lacks(d.Needs())}
	var tasks []task
	for _, p := range probes {
		if dr.untestable != "" {
			break
		}
		if p.Suite != d.Suite.OrCourse() {
			continue
		}
		dr.suite = append(dr.suite, p)
		if base.reaches(p.ID, d.ID) {
			dr.reached = append(dr.reached, p.ID)
		}
		if !r.NoSelect && (!base.reaches(p.ID, d.ID) || !p.touches(d)) {
			continue
		}
		dr.selected = append(dr.selected, p)
		if res, ok := ru.defectProbe(d, p, base.results[p.ID], base.kept[p.ID]); ok {
			dr.reused[p.ID] = res
			continue
		}
		dr.runs[p.ID] = make([]probeRun, n)
		for k := range n {
			tasks = append(tasks, task{dr: dr, probe: p, k: k})
		}
	}
	dr.left = len(tasks)
	return dr, tasks
}

// judgeDefect judges one defect from its probes' runs: a probe that hung
// makes the defect hung, one that failed an error; otherwise its results
// (the first repeat's), with the baseline's for the probes it did not
// run, are diffed against the prediction.
func (r *Runner) judgeDefect(dr *defectRun, base *baseRun) report.Defect {
	if dr.untestable != "" {
		return judgeFacts(r.Predictions, dr.d, facts{untestable: dr.untestable})
	}
	w := workResult{}
	var err error
	ran := map[string]*ProbeResult{}
	var flaky []report.Flake
	for _, p := range dr.selected {
		if res, ok := dr.reused[p.ID]; ok {
			ran[p.ID] = res
			continue
		}
		runs := dr.runs[p.ID]
		for _, pr := range runs {
			w.ms += pr.wall.Milliseconds()
			switch {
			case pr.err == nil:
			case pr.hung:
				w.hung, err = true, pr.err
			case err == nil:
				err = pr.err
			}
		}
		if err == nil {
			ran[p.ID] = runs[0].result
			if f, ok := flake(string(dr.d.ID), p.ID, runs); ok {
				flaky = append(flaky, f)
			}
		}
	}
	if err == nil {
		w.result = r.assemble(string(dr.d.ID), dr.suite, ran, base.work.result)
	}
	out := r.judge(dr.d, w, err, base.work.result)
	out.Reached = slices.Clone(dr.reached)
	out.NotReached = len(dr.reached) == 0
	out.Probes = (len(dr.selected) - len(dr.reused)) * r.repeats()
	out.Flaky = flaky
	if len(dr.reused) > 0 && r.Previous != nil {
		out.Reuse = &report.DefectReuse{From: r.Previous.Run.ID, Probes: []string{}, Rejudged: predictionChanged(r.Previous, out)}
		for _, p := range dr.selected {
			if _, ok := dr.reused[p.ID]; ok {
				out.Reuse.Probes = append(out.Reuse.Probes, p.ID)
			}
		}
	}
	return out
}

// defectIndex is the defect's place in the registry, the order every
// report lists defects in (after all of them: an id it lacks).
func defectIndex(id string) int {
	for i, d := range mutants.All {
		if string(d.ID) == id {
			return i
		}
	}
	return len(mutants.All)
}
