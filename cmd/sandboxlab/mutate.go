package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"sandboxlab"
	"sandboxlab/attacks"
	"sandboxlab/checks"
	"sandboxlab/mutants"
	"sandboxlab/mutants/harness"
	"sandboxlab/report"
	"sandboxlab/report/verdict"
	"sandboxlab/sandbox"
	"sandboxlab/sandbox/reexec"
)

func init() {
	register(command{name: "mutate", summary: "switch on each planted defect in turn and diff what fails against predictions.yaml", run: mutateCmd})
}

func mutateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("mutate", "[--predictions FILE] [--suite course|hardening|all] [--only id,...] [-j N] [--fail-on escape|any|never] "+formatUsage,
		"Runs the correct sandbox first (the baseline: every check must pass and the attack matrix must match\n"+
			"the predictions' baseline), then each planted defect in a process of its own: the checks and the\n"+
			"attack matrix of its own suite (the course's: 26 checks, 16x6 cells), diffed against the predictions.\n"+
			"Each suite's baseline is judged on its own: a broken one stops that suite's defects. The course's\n"+
			"summary, defects and baseline are reported first, exactly as the course has them, then the\n"+
			"hardening suite's; the gate covers both. Outcomes: exact, too_wide, extra, different,\n"+
			"escaped (no check failed), hung. Exit codes: 0 the gate holds; 2 an unexpected escape (a defect no\n"+
			"check caught, or an attack cell that got through, neither predicted nor known; a defect that hung\n"+
			"counts as one); 3 another divergence (only with --fail-on any); 4 the baseline is broken; 1 usage\n"+
			"or internal error.\n\n"+
			"Reports: --format junit gives a testcase per defect (failed when unexpected, error when it hung,\n"+
			"skipped when its divergence is known) and one for the baseline, in a test suite per suite (mutate,\n"+
			"mutate.hardening); --format html is one self-contained page (the heat map, the per-defect table,\n"+
			"the mutation-testing-elements component); --format stryker is JSON in Stryker's\n"+
			"mutation-testing-report-schema; --out DIR writes every format.\n"+
			"Under GitHub Actions (GITHUB_ACTIONS=true) each unexpected escape also becomes an ::error\n"+
			"annotation at the defect's planted site, on stderr (at most 10, then a ::notice:: for the rest).\n"+
			"Progress goes to stderr on a terminal (a bar: defects done, elapsed, ETA) and, a line per defect,\n"+
			"with --verbose.", stderr)
	predFile := fs.String("predictions", "", "predictions `FILE` (default: the predictions.yaml built into the binary)")
	suite := suiteFlag(fs)
	only := fs.String("only", "", "comma-separated defect `ids` to run (default all of the suites; only their suites run)")
	jobs := fs.Int("j", defaultJobs(), "defects run at once (`N`); each runs its checks and attacks one after another")
	failOnFlag := fs.String("fail-on", string(verdict.FailOnEscape), "what fails the gate: `escape` (an unexpected escape), any (any divergence), never")
	timeout := fs.Duration("timeout", 6*time.Minute, "bound on one defect's run; past it the defect is reported as hung")
	replay := fs.String("replay", "", "run nothing: judge what an earlier run measured (its JSON report `FILE`, from --format json\nor --out) against the predictions, e.g. to try an edit of predictions.yaml")
	out := outputFlags(fs, "mutate", report.HTML, report.Stryker)
	if stop, err := parseFlags(fs, args); stop {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return usagef("%v", err)
	}
	failOn, err := verdict.ParseFailOn(*failOnFlag)
	if err != nil {
		return usagef("--fail-on: %v", err)
	}
	if *jobs < 1 {
		return usagef("-j: want at least 1, got %d", *jobs)
	}
	suites, err := parseSuite(*suite)
	if err != nil {
		return err
	}
	if *replay != "" && flagSet(fs, "suite") {
		return usagef("--suite and --replay: a replay judges the suites the earlier run had")
	}
	if !mutants.Compiled {
		return mutants.ErrNotCompiled
	}
	preds, err := loadPredictions(*predFile)
	if err != nil {
		return err
	}
	if *replay != "" {
		prev, err := readMutation(*replay)
		if err != nil {
			return fmt.Errorf("--replay: %w", err)
		}
		m, err := harness.Rejudge(prev, preds, failOn)
		if err != nil {
			return fmt.Errorf("--replay %s: %w", *replay, err)
		}
		return finishMutate(m, out, stdout, stderr)
	}
	eta := newMutateETA(out.progress(stderr), *jobs)
	r := &harness.Runner{
		Worker: func(ctx context.Context, defect string, suites []verdict.Suite) *exec.Cmd {
			return reexec.CommandContext(ctx, workerName, "--defect", defect, "--suite", verdict.SuiteList(suites))
		},
		Predictions: preds,
		Suites:      suites,
		Only:        splitList(*only),
		Jobs:        *jobs,
		Timeout:     *timeout,
		FailOn:      failOn,
		Identity:    identity(),
		Progress:    eta.step,
	}
	m, err := r.Run(ctx)
	eta.p.end()
	if err != nil {
		return err
	}
	return finishMutate(m, out, stdout, stderr)
}

// loadPredictions reads the predictions file, or the one built into the
// binary when file is "".
func loadPredictions(file string) (*harness.Predictions, error) {
	data, name := sandboxlab.Predictions, "the built-in predictions.yaml"
	if file != "" {
		var err error
		if data, err = os.ReadFile(file); err != nil {
			return nil, err
		}
		name = file
	}
	preds, err := harness.ParsePredictions(data, universe())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return preds, nil
}

// universe is what a predictions file may name: every check and attack
// with its suite, and every planted defect.
func universe() harness.Universe {
	u := harness.Universe{Checks: checks.IDs(), Attacks: attacks.IDs(), Levels: sandbox.Levels,
		CheckSuites: map[string]verdict.Suite{}, AttackSuites: map[string]verdict.Suite{}}
	for _, c := range checks.All {
		u.CheckSuites[c.ID] = c.Suite
	}
	for _, a := range attacks.All() {
		u.AttackSuites[a.ID] = a.Suite
	}
	return u
}

// defaultJobs is one worker more than there are cores: a worker spends
// much of its time waiting on wall clocks (1.5 s timeouts, sleeping
// programs), and every check is built to hold with the cores kept busy.
// Measured on two cores: -j 2 about 10 minutes, -j 3 about 8, with the
// same verdicts.
func defaultJobs() int { return runtime.NumCPU() + 1 }

// readMutation reads a mutate report back from its JSON.
func readMutation(path string) (*report.Mutation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m report.Mutation
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s is not a mutate report in JSON: %w", path, err)
	}
	return &m, nil
}

// finishMutate writes the report and the annotations and exits with the
// gate's code.
func finishMutate(m *report.Mutation, out *output, stdout, stderr io.Writer) error {
	if err := out.write(stdout, m); err != nil {
		return err
	}
	// Annotations go to stderr: the Actions runner reads workflow
	// commands from both streams, and stdout may be carrying JSON or
	// JUnit that a ::error line would corrupt.
	if os.Getenv("GITHUB_ACTIONS") == "true" {
		if err := report.WriteGitHubAnnotations(stderr, m, report.SiteLocator(sourceRoots()...)); err != nil {
			return fmt.Errorf("writing annotations: %w", err)
		}
	}
	return exit(harness.ExitCode(m))
}

// sourceRoots lists where the planted sites' files may be found, most
// likely first: the current directory (CI runs in the checkout),
// $GITHUB_WORKSPACE, and the sandboxlab module root above the current
// directory or above this binary (bin/sandboxlab in a checkout).
func sourceRoots() []string {
	roots := []string{"."}
	if ws := os.Getenv("GITHUB_WORKSPACE"); ws != "" {
		roots = append(roots, ws)
	}
	starts := []string{}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, dir := range starts {
		if root := moduleRoot(dir); root != "" {
			roots = append(roots, root)
		}
	}
	return roots
}

// moduleRoot returns the nearest directory at or above dir whose go.mod
// declares module sandboxlab, or "".
func moduleRoot(dir string) string {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if strings.TrimSpace(line) == "module sandboxlab" {
					return dir
				}
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// identity says who runs the harness, for every report.
func identity() report.Identity {
	return report.Identity{UID: os.Geteuid(), Root: sandbox.HostRoot(), ProgramUID: sandbox.HostIdentity().UID}
}

// mutateETA prints the progress of a mutation run: a line per finished
// defect, and on a terminal a bar of the defects done with the time
// elapsed and an estimate of the time left.
type mutateETA struct {
	p    *progress
	jobs int

	mu       sync.Mutex
	start    time.Time
	baseDone time.Duration // when the baseline finished (0: still running)
	done     int
	total    int
	finish   time.Time // the estimated end, set at each defect's end
}

func newMutateETA(p *progress, jobs int) *mutateETA {
	e := &mutateETA{p: p, jobs: jobs, start: time.Now(), total: -1}
	p.start("mutate", 0, func() string { return "baseline" }, e.status)
	return e
}

// step records the baseline's or a defect's end and prints its line.
func (e *mutateETA) step(pr harness.Progress) {
	e.mu.Lock()
	if pr.Defect.ID == "" {
		e.baseDone, e.total = max(pr.Elapsed, time.Nanosecond), pr.Total
		e.mu.Unlock()
		e.p.line("baseline done in %s; %d defects to run, %d at a time", roundDuration(pr.Elapsed), pr.Total, e.jobs)
		e.p.set(0, pr.Total)
		return
	}
	e.done, e.total = pr.Done, pr.Total
	e.estimate(pr.Elapsed)
	left := e.left()
	e.mu.Unlock()
	e.p.line("%s %-18s %-9s %3d s   %s elapsed%s", counter(pr.Done, pr.Total), pr.Defect.ID, pr.Defect.Outcome,
		pr.Defect.MS/1000, roundDuration(pr.Elapsed), left)
	e.p.set(pr.Done, pr.Total)
}

// status is the bar's text after the defects done: the time elapsed and
// the estimate of the time left.
func (e *mutateETA) status() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	elapsed := roundDuration(time.Since(e.start))
	if e.baseDone == 0 {
		return fmt.Sprintf("running, %s elapsed", elapsed)
	}
	return fmt.Sprintf("%s elapsed%s", elapsed, e.left())
}

// estimate extrapolates the time left from the defects done so far; the
// baseline's time is left out, since it runs alone before any defect.
// The caller holds mu.
func (e *mutateETA) estimate(elapsed time.Duration) {
	e.finish = time.Time{}
	if e.done > 0 && e.total > e.done {
		e.finish = e.start.Add(elapsed + time.Duration(float64(elapsed-e.baseDone)/float64(e.done)*float64(e.total-e.done)))
	}
}

// left words the estimate; between two defects it counts down rather
// than grow with the wait. The caller holds mu.
func (e *mutateETA) left() string {
	switch {
	case e.finish.IsZero():
		return ""
	case time.Until(e.finish) < time.Second:
		return ", finishing"
	}
	return fmt.Sprintf(", about %s left", roundDuration(time.Until(e.finish)))
}
