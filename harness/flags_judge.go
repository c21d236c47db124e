package harness

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"sandboxlab/attacks/backends/argv"
	"sandboxlab/report"
)

// runMutants runs each mutant's column on the attacks the baseline stops
// and judges it; the report counts the cell runs, and those a run of
// every attack would have made.
func (r *FlagRunner) runMutants(ctx context.Context, pl *pool, f *report.FlagMutation, ms []argv.Mutant, weight float64, prog *flagProgressor, phase string) []report.FlagMutant {
	tasks := make([]FlagTask, len(ms))
	for i, m := range ms {
		p := *r.Sandbox.Profile
		p.Command = m.Command
		tasks[i] = FlagTask{Mutant: m.ID, Spec: r.Sandbox.Spec, Profile: p, Only: f.Baseline.Stopped, Suites: r.Suites}
	}
	prog.phase(phase, len(tasks))
	out := make([]report.FlagMutant, len(ms))
	runs := r.runColumns(ctx, pl, tasks, weight, func(i int, runs []columnRun) {
		out[i] = judgeMutant(f, ms[i], runs)
		prog.done(&out[i])
	})
	r.confirmUnviable(ctx, pl, f, ms, tasks, weight, out)
	for i, m := range ms {
		f.Flaky = append(f.Flaky, cellFlakes(m.ID, runs[i], f.Baseline.Stopped)...)
		f.Run.CellRuns += out[i].CellRuns
		f.Run.CellRunsUnselected += len(f.Baseline.Cells) * r.repeats()
	}
	return out
}

// confirmUnviable runs each unviable mutant's column once more: a
// sandbox that fails to start can fail for the host's sake (bwrap's
// recursive bind of / races with mounts other work makes and removes
// under /tmp). A mutant that starts the second time is judged by that
// run, and says what the first printed; one that fails again is
// unviable.
func (r *FlagRunner) confirmUnviable(ctx context.Context, pl *pool, f *report.FlagMutation, ms []argv.Mutant, tasks []FlagTask, weight float64, out []report.FlagMutant) {
	var again []int
	for i := range out {
		if out[i].Verdict == report.Unviable {
			again = append(again, i)
		}
	}
	if len(again) == 0 {
		return
	}
	sub := make([]FlagTask, len(again))
	for j, i := range again {
		sub[j] = tasks[i]
	}
	runs := r.runColumns(ctx, pl, sub, weight, func(int, []columnRun) {})
	for j, i := range again {
		second := judgeMutant(f, ms[i], runs[j])
		if second.Verdict == report.Unviable || second.Verdict == report.FlagError {
			out[i].CellRuns += second.CellRuns
			continue
		}
		second.Retried = out[i].Unviable
		second.CellRuns += out[i].CellRuns
		second.MS += out[i].MS
		out[i] = second
	}
}

// judgeMutant judges a mutant's runs by the first: no matrix is an
// error; a skipped column is unviable, with what the probe printed;
// otherwise it is killed by every attack the baseline stops that
// escaped under it.
func judgeMutant(f *report.FlagMutation, m argv.Mutant, runs []columnRun) report.FlagMutant {
	out := report.FlagMutant{ID: m.ID, Groups: m.Groups(), Operator: m.Operator(), Description: m.Description,
		Command: m.Command, Killed: []string{}}
	var repl []string
	for _, e := range m.Edits {
		repl = append(repl, strings.Join(e.Words, " "))
	}
	out.Replacement = strings.Join(repl, " + ")
	for _, run := range runs {
		_, cells := run.column()
		out.CellRuns += len(cells)
		out.MS += run.wall.Milliseconds()
	}
	first := runs[0]
	col, cells := first.column()
	switch {
	case first.err != nil:
		out.Verdict, out.Error = report.FlagError, first.err.Error()
		return out
	case col.Skipped != "":
		out.Verdict, out.Unviable = report.Unviable, col.Skipped
		return out
	}
	out.Verdict = report.Survived
	for _, c := range cells {
		if !slices.Contains(f.Baseline.Stopped, c.Attack) {
			continue
		}
		switch c.State {
		case report.Escaped:
			out.Verdict = report.LoadBearing
			out.Killed = append(out.Killed, c.Attack)
			out.Evidence = append(out.Evidence, c)
		case report.NotApplicable:
			out.NotApplicable = append(out.NotApplicable, c.Attack)
		}
	}
	return out
}

// runPairs runs each survivor with another survivor (the removals
// first), then with each load-bearing mutant, the bound's worth; a pair
// is killed when an attack escapes that neither of its two let through
// alone. So a survivor is masked when some other flag guards what it
// guards: a survivor, or a flag whose own removal the battery notices
// for another attack. Then it classifies each survivor: masked when a
// pair with it was killed, untested when every pair with it ran and
// survived, unclassified otherwise.
func (r *FlagRunner) runPairs(ctx context.Context, pl *pool, f *report.FlagMutation, ms []argv.Mutant, weight float64, prog *flagProgressor) {
	byID := map[string]argv.Mutant{}
	for _, m := range ms {
		byID[m.ID] = m
	}
	var survivors, bearing []argv.Mutant
	for _, fm := range f.Mutants {
		switch fm.Verdict {
		case report.Survived:
			survivors = append(survivors, byID[fm.ID])
		case report.LoadBearing:
			bearing = append(bearing, byID[fm.ID])
		}
	}
	type pair struct{ a, b argv.Mutant }
	apart := func(a, b argv.Mutant) bool {
		return !slices.ContainsFunc(a.Groups(), func(g int) bool { return slices.Contains(b.Groups(), g) })
	}
	var both, mixed []pair
	for i, a := range survivors {
		for _, b := range survivors[i+1:] {
			if apart(a, b) {
				both = append(both, pair{a, b})
			}
		}
		for _, b := range bearing {
			if apart(a, b) {
				mixed = append(mixed, pair{a, b})
			}
		}
	}
	removal := func(p pair) bool { return p.a.Operator() == argv.Remove && p.b.Operator() == argv.Remove }
	for _, list := range [][]pair{both, mixed} {
		slices.SortStableFunc(list, func(x, y pair) int {
			switch {
			case removal(x) && !removal(y):
				return -1
			case removal(y) && !removal(x):
				return 1
			}
			return 0
		})
	}
	all := append(both, mixed...)
	run := all[:min(len(all), r.maxPairs())]
	f.Run.PairsLeftOut = len(all) - len(run)
	var pms []argv.Mutant
	var of [][]string
	for _, p := range run {
		if m, err := argv.Pair(r.Sandbox.Profile.Name, r.Grouping, p.a, p.b); err == nil {
			pms, of = append(pms, m), append(of, []string{p.a.ID, p.b.ID})
		}
	}
	f.Pairs = r.runMutants(ctx, pl, f, pms, weight, prog, PhasePairs)
	for i := range f.Pairs {
		f.Pairs[i].With = of[i]
		onlyNew(f, &f.Pairs[i])
	}
	classify(f, len(all) > len(run))
}

// onlyNew keeps of a pair's escapes those neither of its two mutants let
// through alone: a pair is killed only by what they guard together.
func onlyNew(f *report.FlagMutation, p *report.FlagMutant) {
	if p.Verdict != report.LoadBearing {
		return
	}
	alone := map[string]bool{}
	for _, id := range p.With {
		if m, ok := f.Mutant(id); ok {
			for _, a := range m.Killed {
				alone[a] = true
			}
		}
	}
	var killed []string
	var ev []report.SandboxCell
	for _, c := range p.Evidence {
		if !alone[c.Attack] {
			killed, ev = append(killed, c.Attack), append(ev, c)
		}
	}
	p.Killed, p.Evidence = append([]string{}, killed...), ev
	if len(killed) == 0 {
		p.Verdict = report.Survived
	}
}

// classify gives each survivor its class from the pairs that ran (each
// pair's With names the two mutants it combines).
func classify(f *report.FlagMutation, cut bool) {
	for i := range f.Mutants {
		m := &f.Mutants[i]
		if m.Verdict != report.Survived {
			continue
		}
		ranAll := !cut
		for _, p := range f.Pairs {
			if !slices.Contains(p.With, m.ID) {
				continue
			}
			switch p.Verdict {
			case report.LoadBearing:
				for _, s := range p.With {
					if s != m.ID && !slices.Contains(m.With, s) {
						m.With = append(m.With, s)
					}
				}
			case report.Survived:
			default:
				ranAll = false // unviable or no verdict: says nothing of masking
			}
		}
		switch {
		case len(m.With) > 0:
			m.Class = report.Masked
		case ranAll:
			m.Class = report.Untested
		default:
			m.Class = report.Unclassified
		}
	}
}

// flagProgressor calls the Progress function one call at a time.
type flagProgressor struct {
	fn    func(FlagProgress)
	start time.Time
	mu    sync.Mutex
	p     FlagProgress
}

// phase starts a phase of total columns.
func (p *flagProgressor) phase(name string, total int) {
	p.update(func(fp *FlagProgress) { fp.Phase, fp.Done, fp.Total = name, 0, total })
}

// done counts a column (all its repeats) done: the baseline's (nil) or
// a mutant's.
func (p *flagProgressor) done(m *report.FlagMutant) {
	p.update(func(fp *FlagProgress) { fp.Done, fp.Mutant = fp.Done+1, m })
}

func (p *flagProgressor) update(f func(*FlagProgress)) {
	if p.fn == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	f(&p.p)
	p.p.Elapsed = time.Since(p.start)
	p.fn(p.p)
}
