package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"sandboxlab/mutants"
	"sandboxlab/report"
	"sandboxlab/report/verdict"
	"sandboxlab/sandbox/procfs"
)

// WorkerResult is what one worker prints on its standard output: the
// checks and the attack matrix with one defect switched on (none for the
// baseline).
type WorkerResult struct {
	Checks  *report.Checks  `json:"checks"`
	Attacks *report.Attacks `json:"attacks"`
}

// Progress describes the runner's state after a defect finished.
type Progress struct {
	Done, Total int
	Defect      report.Defect
	Elapsed     time.Duration
}

// Runner runs the baseline and then each defect in a process of its own,
// and diffs the results against the predictions.
type Runner struct {
	// Worker returns the command for one worker with defect id switched
	// on ("" for the correct sandbox). Its standard output must be one
	// WorkerResult in JSON.
	Worker func(ctx context.Context, defect string) *exec.Cmd
	// Predictions are what the runs are compared with.
	Predictions *Predictions
	// Only lists the defects to run (all when empty).
	Only []string
	// Jobs is how many defects run at once.
	Jobs int
	// Timeout bounds one worker; a worker past it is killed and its
	// defect reported as hung.
	Timeout time.Duration
	// FailOn is the gate's policy.
	FailOn verdict.FailOn
	// Progress, if set, is called after the baseline and each defect.
	Progress func(Progress)
	// Identity goes into the report.
	Identity report.Identity
}

// Run runs everything and returns the report. The error is for what
// stops the whole run (an interrupt); a broken baseline is a report with
// Baseline.OK false and no defects.
func (r *Runner) Run(ctx context.Context) (*report.Mutation, error) {
	start := time.Now()
	list, err := r.defects()
	if err != nil {
		return nil, err
	}
	m := &report.Mutation{Identity: r.Identity, Jobs: r.Jobs, Defects: []report.Defect{}}
	base, err := r.work(ctx, "")
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	m.Baseline = r.judgeBaseline(base, err)
	if r.Progress != nil {
		r.Progress(Progress{Done: 0, Total: len(list), Elapsed: time.Since(start)})
	}
	if m.Baseline.OK {
		m.Defects = r.runDefects(ctx, list, base.result, start)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	finish(m, r.FailOn)
	m.MS = time.Since(start).Milliseconds()
	return m, nil
}

// finish counts the outcomes and decides the gate.
func finish(m *report.Mutation, failOn verdict.FailOn) {
	m.FailOn = failOn
	m.Tally()
	m.Gate = verdict.Pass
	if !m.Baseline.OK || gateFails(m, failOn) {
		m.Gate = verdict.Fail
	}
}

// Rejudge diffs the facts of an earlier run (a report of 'mutate', read
// back from its JSON) against preds, without running anything: what
// failed and what escaped stay as measured, the verdicts follow the
// predictions. It is how an edit of predictions.yaml is tried out, and how
// the gate's answers to such edits are tested.
func Rejudge(prev *report.Mutation, preds *Predictions, failOn verdict.FailOn) (*report.Mutation, error) {
	if prev.Baseline.Checks == nil || prev.Baseline.Attacks == nil {
		return nil, errors.New("the report has no baseline to compare with (was the baseline broken?)")
	}
	m := &report.Mutation{Identity: prev.Identity, Jobs: prev.Jobs, MS: prev.MS, Defects: []report.Defect{}}
	m.Baseline = judgeBaselineReports(preds, prev.Baseline.Checks, prev.Baseline.Attacks, prev.Baseline.MS)
	for _, pd := range prev.Defects {
		d, err := mutants.Lookup(pd.ID)
		if err != nil {
			return nil, err
		}
		f := facts{failed: pd.FailedChecks, newEscapes: pd.EscapedAttacks, ms: pd.MS}
		if pd.Outcome.NoVerdict() {
			f.err, f.hung = errors.New(pd.Error), pd.Outcome == verdict.Hung
		}
		m.Defects = append(m.Defects, judgeFacts(preds, d, f))
	}
	finish(m, failOn)
	return m, nil
}

// ExitCode maps the report to its exit code: the gate holds, an
// unexpected escape, another divergence (only with --fail-on any), or a
// broken baseline.
func ExitCode(m *report.Mutation) int {
	switch {
	case !m.Baseline.OK:
		return verdict.ExitBaseline
	case m.Gate == verdict.Pass:
		return verdict.ExitOK
	case m.Summary.UnexpectedEscapes > 0:
		return verdict.ExitEscape
	}
	return verdict.ExitDivergence
}

func gateFails(m *report.Mutation, failOn verdict.FailOn) bool {
	switch failOn {
	case verdict.FailOnNever:
		return false
	case verdict.FailOnAny:
		return m.Summary.Unexpected > 0
	}
	return m.Summary.UnexpectedEscapes > 0
}

func (r *Runner) defects() ([]mutants.Defect, error) {
	if len(r.Only) == 0 {
		return mutants.All, nil
	}
	var out []mutants.Defect
	want := map[string]bool{}
	for _, id := range r.Only {
		if _, err := mutants.Lookup(id); err != nil {
			return nil, err
		}
		want[id] = true
	}
	for _, d := range mutants.All {
		if want[string(d.ID)] {
			out = append(out, d)
		}
	}
	return out, nil
}

// runDefects runs the defects, Jobs at a time, and returns their results
// in registry order.
func (r *Runner) runDefects(ctx context.Context, list []mutants.Defect, base *WorkerResult, start time.Time) []report.Defect {
	out := make([]report.Defect, len(list))
	jobs := max(1, r.Jobs)
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for i, d := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			res, err := r.work(ctx, string(d.ID))
			out[i] = r.judge(d, res, err, base)
			mu.Lock()
			done++
			if r.Progress != nil && ctx.Err() == nil {
				r.Progress(Progress{Done: done, Total: len(list), Defect: out[i], Elapsed: time.Since(start)})
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// workResult is one worker's result and how long it took.
type workResult struct {
	result *WorkerResult
	ms     int64
	hung   bool
}

// errHung marks a worker that ran past its time.
var errHung = errors.New("hung")

// work runs one worker. Everything it leaves behind is cleaned up: its
// processes, whatever they forked (found by their tags and by a control
// group when one can be made), and its temporary directory.
func (r *Runner) work(ctx context.Context, defect string) (workResult, error) {
	start := time.Now()
	tmp, err := os.MkdirTemp("", "sandboxlab-mutant-")
	if err != nil {
		return workResult{}, err
	}
	defer os.RemoveAll(tmp)
	// The sandboxed programs' identity must reach sessions made below it.
	if err := os.Chmod(tmp, 0o711); err != nil {
		return workResult{}, err
	}
	wctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	cmd := r.Worker(wctx, defect)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.Dir = tmp
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &limitedBuffer{buf: &stderr, max: 64 << 10}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// On timeout or interrupt: ask the worker to stop (it cleans up after
	// its current check or cell), then kill it.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		return workResult{}, fmt.Errorf("starting worker: %w", err)
	}
	jail := newJail(fmt.Sprintf("%d-%d", os.Getpid(), cmd.Process.Pid))
	jail.add(cmd.Process.Pid)
	waitErr := cmd.Wait()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	procfs.KillWithArgPrefix(procfs.TagPrefix(cmd.Process.Pid), 10*time.Second)
	jail.close()
	wr := workResult{ms: time.Since(start).Milliseconds()}
	if errors.Is(wctx.Err(), context.DeadlineExceeded) {
		wr.hung = true
		return wr, fmt.Errorf("%w: no verdict within %v", errHung, r.Timeout)
	}
	if ctx.Err() != nil {
		return wr, ctx.Err()
	}
	var res WorkerResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.Checks == nil || res.Attacks == nil {
		msg := strings.TrimSpace(stderr.String())
		if waitErr != nil {
			return wr, fmt.Errorf("worker failed (%v): %s", waitErr, lastLine(msg))
		}
		return wr, fmt.Errorf("worker printed no result (%v): %s", err, lastLine(msg))
	}
	wr.result = &res
	return wr, nil
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// judgeBaseline checks the correct sandbox: every check passes and each
// attack is first stopped at the predicted level.
func (r *Runner) judgeBaseline(w workResult, err error) report.Baseline {
	if err != nil {
		b := report.Baseline{Expected: r.Predictions.Baseline.Attacks, MS: w.ms}
		b.Problems = []string{"the baseline run failed: " + err.Error()}
		return b
	}
	return judgeBaselineReports(r.Predictions, w.result.Checks, w.result.Attacks, w.ms)
}

func judgeBaselineReports(preds *Predictions, checks *report.Checks, attacks *report.Attacks, ms int64) report.Baseline {
	b := report.Baseline{Expected: preds.Baseline.Attacks, MS: ms, Problems: []string{}, Checks: checks, Attacks: attacks}
	for _, c := range b.Checks.Checks {
		if !c.Passed {
			b.Problems = append(b.Problems, fmt.Sprintf("check %s fails on the correct sandbox: %s", c.ID, c.Evidence))
		}
	}
	names := make([]string, 0, len(b.Expected))
	for a := range b.Expected {
		names = append(names, a)
	}
	sort.Strings(names)
	for _, a := range names {
		want := b.Expected[a]
		got, ok := b.Attacks.FirstStopped[a]
		switch {
		case !ok:
			b.Problems = append(b.Problems, fmt.Sprintf("attack %s was not run", a))
		case got != want:
			b.Problems = append(b.Problems, fmt.Sprintf("attack %s is first stopped at %s, expected L%d", a, levelName(got), want))
		}
	}
	b.OK = len(b.Problems) == 0
	return b
}

func levelName(l int) string {
	if l < 0 {
		return "no level"
	}
	return fmt.Sprintf("L%d", l)
}

// facts is what a defect's run showed, all the diff needs.
type facts struct {
	failed     []string // checks that failed
	newEscapes []string // attack cells escaped that the baseline stops
	err        error    // no verdict (with hung: the worker ran out of time)
	hung       bool
	ms         int64
}

// judge diffs one defect's run against its prediction and the baseline.
func (r *Runner) judge(d mutants.Defect, w workResult, err error, base *WorkerResult) report.Defect {
	f := facts{err: err, hung: w.hung, ms: w.ms, failed: []string{}, newEscapes: []string{}}
	if err == nil {
		f.failed = w.result.Checks.FailedIDs()
		baseEscaped := set(base.Attacks.Escaped())
		for _, c := range w.result.Attacks.Escaped() {
			if !baseEscaped[c] {
				f.newEscapes = append(f.newEscapes, c)
			}
		}
	}
	return judgeFacts(r.Predictions, d, f)
}

// judgeFacts diffs what a defect's run showed against its prediction.
func judgeFacts(preds *Predictions, d mutants.Defect, f facts) report.Defect {
	p := preds.Lookup(string(d.ID))
	out := report.Defect{
		ID: string(d.ID), Summary: d.Summary, Site: d.Site, MS: f.ms,
		FailedChecks: []string{}, EscapedAttacks: []string{}, Unexpected: []string{},
		PredictedChecks: p.CheckIDs(), PredictedAttacks: p.Cells(),
	}
	if p.Known != nil {
		out.Known = &report.Known{Outcome: p.Known.Outcome, Attacks: p.Known.Cells(), Why: p.Known.Why}
	}
	if f.err != nil {
		out.Outcome, out.Error = verdict.Error, f.err.Error()
		if f.hung {
			out.Outcome = verdict.Hung
		}
		// No verdict is not a catch: for the gate it counts as an escape.
		out.Unexpected = append(out.Unexpected, "no verdict: "+f.err.Error())
		out.UnexpectedEscape = true
		return out
	}
	out.FailedChecks = append(out.FailedChecks, f.failed...)
	out.EscapedAttacks = append(out.EscapedAttacks, f.newEscapes...)
	out.Outcome = verdict.Compare(out.FailedChecks, out.PredictedChecks)
	if want := p.Known.ExpectedOutcome(); out.Outcome != want {
		if out.Outcome != verdict.Exact {
			out.Unexpected = append(out.Unexpected, fmt.Sprintf("%s: predicted %s, failed %s", out.Outcome, orNone(out.PredictedChecks), orNone(out.FailedChecks)))
		}
		if want != verdict.Exact {
			out.Unexpected = append(out.Unexpected, fmt.Sprintf("the known %s divergence did not happen", want))
		}
		if out.Outcome == verdict.Escaped {
			out.UnexpectedEscape = true
		}
	}
	predicted, escaped, known := set(out.PredictedAttacks), set(out.EscapedAttacks), set(p.Known.Cells())
	for _, c := range out.EscapedAttacks {
		switch {
		case predicted[c] && known[c]:
			out.Unexpected = append(out.Unexpected, "attack cell "+c+" escaped as predicted, against its known divergence")
		case !predicted[c] && !known[c]:
			out.Unexpected = append(out.Unexpected, "attack cell "+c+" escaped, not predicted")
			out.UnexpectedEscape = true
		}
	}
	for _, c := range out.PredictedAttacks {
		if !escaped[c] && !known[c] {
			out.Unexpected = append(out.Unexpected, "attack cell "+c+" was predicted to escape but was stopped")
		}
	}
	for _, c := range p.Known.Cells() {
		if !predicted[c] && !escaped[c] {
			out.Unexpected = append(out.Unexpected, "attack cell "+c+" is known to escape but was stopped")
		}
	}
	return out
}

func orNone(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
