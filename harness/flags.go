package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"time"

	"sandboxlab/attacks/backends"
	"sandboxlab/attacks/backends/argv"
	"sandboxlab/report"
	"sandboxlab/verdict"
)

// FlagRunner mutates a reviewer's sandbox: a profile's command line,
// flag group by flag group (argv.Mutants), each mutant a column of the
// attack × sandbox matrix run in a worker process of its own, sharing the
// cores through the mutation pool.
//
// The baseline is the unmutated profile's column. A mutant runs only the
// attacks the baseline stops, since only those can kill it: it is killed
// (load-bearing) when one escapes, survives when none does, and is
// unviable when the sandbox no longer runs the harness's probe. With
// Pairs the survivors are mutated two at a time: a pair killed where
// neither alone was names two flags that guard the same thing.
type FlagRunner struct {
	// Sandbox is the profile (or custom prefix) to mutate; Grouping its
	// command read as its tool reads it (GroupProfile).
	Sandbox  backends.Sandbox
	Grouping *argv.Grouping
	// Source is where the profile is written and Located where each of
	// its words is (nil: unknown; reports then point at no line).
	Source  *report.ProfileSource
	Located *argv.Located
	// Only and Suites choose the attacks, as attack --only and --suite.
	Only   []string
	Suites []verdict.Suite
	// Shard runs a stable slice of the mutants; Repeat runs every column
	// that many times (a cell whose state changes is flaky).
	Shard  Shard
	Repeat int
	// Groups, if set, keeps only the mutants of the groups whose words
	// (joined by spaces) it lists: a subset of the flags.
	Groups []string
	// Pairs runs each survivor with each other survivor, then with each
	// load-bearing mutant, at most MaxPairs pairs.
	Pairs    bool
	MaxPairs int
	// Jobs, Cores and Timeout are as the Runner's.
	Jobs    int
	Cores   float64
	Timeout time.Duration
	// Worker returns the command for one task (FlagWorkerCommand).
	Worker func(ctx context.Context, t FlagTask) *exec.Cmd
	// Progress, if set, is called after each column, one call at a time.
	Progress func(FlagProgress)
	// Identity and Build go into the report.
	Identity report.Identity
	Build    string
	// Attacks describes each attack (attacks.All's Escapes), for the
	// report's rules.
	Attacks map[string]string
}

// FlagProgress is the flag runner's state after a column.
type FlagProgress struct {
	// Phase is PhaseBaseline, PhaseDefects (the mutants) or PhasePairs.
	Phase       string
	Done, Total int
	// Mutant is the mutant that just finished (nil for the baseline).
	Mutant  *report.FlagMutant
	Elapsed time.Duration
}

// PhasePairs is the pairs' phase of a flag run.
const PhasePairs = "pairs"

// DefaultMaxPairs bounds --pairs: the shipped bubblewrap profile has 28
// pairs of survivors and 40 of a survivor with a load-bearing flag.
const DefaultMaxPairs = 100

// columnRun is one worker's run of a column.
type columnRun struct {
	rep       *report.Sandboxes
	err       error
	hung      bool
	wall, cpu time.Duration
}

// column is the column's one sandbox and its cells (nil: no report).
func (c columnRun) column() (report.Sandbox, []report.SandboxCell) {
	if c.rep == nil || len(c.rep.Sandboxes) != 1 {
		return report.Sandbox{}, nil
	}
	return c.rep.Sandboxes[0], c.rep.Cells
}

// Run runs the baseline, the mutants of the run's shard, and with Pairs
// the pairs of survivors, and returns the report. The error is for what
// stops the whole run (an interrupt).
func (r *FlagRunner) Run(ctx context.Context) (*report.FlagMutation, error) {
	start := time.Now()
	if r.Pairs && r.Shard.N > 0 {
		return nil, errors.New("pairs need every mutant's verdict: they cannot run in a shard")
	}
	f := r.skeleton()
	cores := r.Cores
	if cores <= 0 {
		cores = float64(runtime.NumCPU())
	}
	pl := newPool(r.Jobs, cores)
	watch, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go pl.watchNeighbours(watch)
	prog := &flagProgressor{fn: r.Progress, start: start}

	baseTask := FlagTask{Spec: r.Sandbox.Spec, Profile: *r.Sandbox.Profile, Only: r.Only, Suites: r.Suites}
	prog.phase(PhaseBaseline, 1)
	base := r.runColumns(ctx, pl, []FlagTask{baseTask}, baselineWeight, func(int, []columnRun) { prog.done(nil) })[0]
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	weight := r.judgeBaseline(f, base)
	if !f.Baseline.OK {
		f.MS = time.Since(start).Milliseconds()
		return f, nil
	}
	var mine []argv.Mutant
	for i, m := range r.mutants() {
		if r.Shard.has(i) {
			mine = append(mine, m)
		}
	}
	f.Mutants = r.runMutants(ctx, pl, f, mine, weight, prog, PhaseDefects)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.Pairs {
		began := time.Now()
		r.runPairs(ctx, pl, f, mine, weight, prog)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f.Run.PairsMS = time.Since(began).Milliseconds()
	}
	f.MS = time.Since(start).Milliseconds()
	return f, nil
}

// skeleton is the report before anything ran: the profile, its source,
// its groups and the words not grouped.
func (r *FlagRunner) skeleton() *report.FlagMutation {
	p := r.Sandbox.Profile
	f := &report.FlagMutation{Identity: r.Identity, Profile: p.Name, Spec: r.Sandbox.Spec, About: p.About,
		Tool: r.Grouping.Tool, Command: p.Command, Source: r.Source, Groups: []report.FlagGroup{},
		Ungrouped: []report.UngroupedWord{}, Mutants: []report.FlagMutant{}, Escapes: r.Attacks,
		Run: report.FlagRun{Shard: r.Shard.String(), Repeat: r.repeats(), Build: r.Build, Only: r.Only, Pairs: r.Pairs}}
	if r.Pairs {
		f.Run.MaxPairs = r.maxPairs()
	}
	for _, g := range r.Grouping.Groups {
		f.Groups = append(f.Groups, report.FlagGroup{Index: g.Index, Words: g.Words, Kind: string(g.Kind), Fixed: g.Kind.Fixed(),
			At: spanOf(r.Located.GroupSpan(g))})
	}
	for _, u := range r.Grouping.Ungrouped {
		var at *report.SourceSpan
		if r.Located != nil && u.Word < len(r.Located.Words) {
			at = spanOf(r.Located.Words[u.Word])
		}
		f.Ungrouped = append(f.Ungrouped, report.UngroupedWord{Word: u.Word, Text: u.Text, Why: u.Why, At: at})
	}
	return f
}

// mutants are the profile's mutants, of Groups' groups when it is set.
func (r *FlagRunner) mutants() []argv.Mutant {
	all := argv.Mutants(r.Sandbox.Profile.Name, r.Grouping)
	if len(r.Groups) == 0 {
		return all
	}
	var out []argv.Mutant
	for _, m := range all {
		if slices.Contains(r.Groups, r.Grouping.Groups[m.Edits[0].Group].Text()) {
			out = append(out, m)
		}
	}
	return out
}

func (r *FlagRunner) repeats() int { return max(1, r.Repeat) }

func (r *FlagRunner) maxPairs() int {
	if r.MaxPairs > 0 {
		return r.MaxPairs
	}
	return DefaultMaxPairs
}

// spanOf converts a span (nil for a zero one).
func spanOf(s argv.Span) *report.SourceSpan {
	if s.StartLine == 0 {
		return nil
	}
	return &report.SourceSpan{StartLine: s.StartLine, StartColumn: s.StartColumn, EndLine: s.EndLine, EndColumn: s.EndColumn}
}

// runColumns runs each task Repeat times through the pool, each run
// weighing weight, and returns each task's runs; finished is called with
// a task's runs when its last ends, one call at a time.
func (r *FlagRunner) runColumns(ctx context.Context, pl *pool, tasks []FlagTask, weight float64, finished func(i int, runs []columnRun)) [][]columnRun {
	n := r.repeats()
	out := make([][]columnRun, len(tasks))
	left := make([]int, len(tasks))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, t := range tasks {
		out[i], left[i] = make([]columnRun, n), n
		for k := range n {
			tk := pl.enqueue(weight)
			wg.Add(1)
			go func() {
				defer wg.Done()
				t := t
				t.Repeat = k
				var run columnRun
				if release, err := pl.wait(ctx, tk); err != nil {
					run.err = err
				} else {
					run = r.runColumn(ctx, t)
					release()
				}
				mu.Lock()
				defer mu.Unlock()
				out[i][k] = run
				if left[i]--; left[i] == 0 && ctx.Err() == nil {
					finished(i, out[i])
				}
			}()
		}
	}
	wg.Wait()
	return out
}

// runColumn runs one task in a worker and reads its matrix.
func (r *FlagRunner) runColumn(ctx context.Context, t FlagTask) columnRun {
	what := t.Mutant
	if what == "" {
		what = "the unmutated " + t.Profile.Name
	}
	w := runWorker(ctx, r.timeout(), what, func(ctx context.Context) *exec.Cmd { return r.Worker(ctx, t) })
	out := columnRun{err: w.err, hung: w.hung, wall: w.wall, cpu: w.cpu}
	if w.err != nil {
		return out
	}
	var rep report.Sandboxes
	if err := json.Unmarshal(w.stdout, &rep); err != nil || len(rep.Sandboxes) != 1 {
		if w.waitErr != nil {
			out.err = fmt.Errorf("worker for %s failed (%v): %s", what, w.waitErr, w.stderr)
		} else {
			out.err = fmt.Errorf("worker for %s printed no matrix (%v): %s", what, err, w.stderr)
		}
		return out
	}
	out.rep = &rep
	return out
}

func (r *FlagRunner) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultTimeout
}

// judgeBaseline fills in the baseline from its runs: the column ran in
// every repeat, and the attacks it stops in every one (a cell that
// changes between repeats is flaky, and kills nothing). It returns what
// a column weighs in the pool: the share of a CPU the baseline used.
func (r *FlagRunner) judgeBaseline(f *report.FlagMutation, runs []columnRun) float64 {
	b := &f.Baseline
	b.Cells, b.Stopped = []report.SandboxCell{}, []string{}
	var cpu, wall time.Duration
	for _, run := range runs {
		cpu, wall = cpu+run.cpu, wall+run.wall
		col, cells := run.column()
		switch {
		case run.err != nil:
			b.Problem = "the unmutated profile's column gave no matrix: " + run.err.Error()
		case col.Skipped != "":
			b.Problem = "the unmutated profile did not run: " + col.Skipped
		}
		f.Run.BaselineCellRuns += len(cells)
	}
	if b.Problem != "" {
		return 0
	}
	b.Column, b.Cells = runs[0].column()
	flakes := cellFlakes("", runs, nil)
	f.Flaky = append(f.Flaky, flakes...)
	flaky := map[string]bool{}
	for _, fl := range flakes {
		flaky[fl.Attack] = true
	}
	for _, c := range b.Cells {
		if c.State == report.Stopped && !flaky[c.Attack] {
			b.Stopped = append(b.Stopped, c.Attack)
		}
	}
	if len(b.Stopped) == 0 {
		b.Problem = "the unmutated profile stops no attack (steadily): no mutant can be killed"
		return 0
	}
	b.OK = true
	if wall <= 0 {
		return baselineWeight
	}
	return cpu.Seconds() / wall.Seconds()
}

// cellFlakes returns the cells (of only, or all) whose state differs
// between runs; a column skipped in one run and not in another flakes
// as "probe".
func cellFlakes(mutant string, runs []columnRun, only []string) []report.FlagFlake {
	if len(runs) < 2 {
		return nil
	}
	states := map[string][]string{}
	var order []string
	for _, run := range runs {
		col, cells := run.column()
		probe := "ran"
		if col.Skipped != "" {
			probe = "unviable"
		}
		states["probe"] = append(states["probe"], probe)
		for _, c := range cells {
			if only != nil && !slices.Contains(only, c.Attack) {
				continue
			}
			if _, ok := states[c.Attack]; !ok {
				order = append(order, c.Attack)
			}
			states[c.Attack] = append(states[c.Attack], string(c.State))
		}
	}
	var out []report.FlagFlake
	for _, a := range append([]string{"probe"}, order...) {
		s := states[a]
		for _, v := range s {
			if v != s[0] || len(s) != len(runs) {
				out = append(out, report.FlagFlake{Mutant: mutant, Attack: a, States: s})
				break
			}
		}
	}
	return out
}
