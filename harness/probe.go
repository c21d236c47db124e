package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"sandboxlab/attacks"
	"sandboxlab/mutants"
	"sandboxlab/report"
	"sandboxlab/sandbox/procfs"
	"sandboxlab/verdict"
)

// Probe is one thing the harness runs and judges on its own: a check, or
// one attack at one level (a cell).
type Probe struct {
	// ID is the check's id, or the cell's name (attack@L<n>).
	ID string
	// Suite is the suite the probe belongs to.
	Suite verdict.Suite
	// Touches names the layers of the policy the probe's verdict can
	// depend on, when its check or attack declares them (nil: any).
	Touches []string
}

// touches reports whether the probe's verdict can depend on defect d:
// always, unless d weakens one layer only and the probe declares the
// layers it depends on without that one.
func (p Probe) touches(d mutants.Defect) bool {
	return p.Touches == nil || d.Layer() == "" || slices.Contains(p.Touches, d.Layer())
}

// IsCell reports whether the probe is an attack cell.
func (p Probe) IsCell() bool { return strings.Contains(p.ID, "@") }

// probes returns every probe of the universe in suites, in report order:
// the checks in registry order, then each attack at each level its suite
// has.
func (u *Universe) probes(suites []verdict.Suite) []Probe {
	var out []Probe
	for _, c := range u.Checks {
		if s := u.CheckSuites[c].OrCourse(); s.In(suites) {
			out = append(out, Probe{ID: c, Suite: s, Touches: u.Touches[c]})
		}
	}
	for _, a := range u.Attacks {
		s := u.AttackSuites[a].OrCourse()
		if !s.In(suites) {
			continue
		}
		for l := 0; l < u.Levels; l++ {
			if s.HasLevel(l) {
				out = append(out, Probe{ID: verdict.AtLevel(a, l).String(), Suite: s, Touches: u.Touches[a]})
			}
		}
	}
	return out
}

// Task is one run of one probe, in a worker process of its own.
type Task struct {
	// Probe is the probe's id.
	Probe string
	// Defect is the planted defect switched on ("" for the correct
	// sandbox).
	Defect string
	// Cover asks the worker to record which planted sites the probe
	// reaches, in every process it involves.
	Cover bool
	// Without names a layer taken away from every policy the probe runs
	// ("" for none): masking discovery.
	Without string
	// Plain undoes the layers a check takes away on purpose, so that the
	// check runs with its level's policy as it is: masking discovery.
	Plain bool
	// Repeat is which run of the probe this is (0 for the first, with
	// --repeat): the report judges by the first and lists the others'
	// verdicts when they differ.
	Repeat int
	// Slots is how many of the host's run slots the worker's runs may
	// use (sandbox.Queue.Max; 0: the default), set by the runner to
	// its job count: the pool already shares the cores among its probes by
	// what they cost, and many of them wait on clocks, so the default
	// slots (two per CPU) would queue behind those waits the probes the
	// pool lets run.
	Slots int
}

// ProbeResult is what a worker prints on its standard output: the
// probe's verdict (a check's or a cell's) and, when asked, the planted
// sites its run reached.
type ProbeResult struct {
	Check *report.Check `json:"check,omitempty"`
	Cell  *report.Cell  `json:"cell,omitempty"`
	// Reached are the ids of the defects whose sites the run asked.
	Reached []string `json:"reached,omitempty"`
	// Layers are the layers (sandbox.Layers) of the probe's level, and
	// TookAway those a check takes away on purpose: the masking search's
	// candidates.
	Layers   []string `json:"layers,omitempty"`
	TookAway []string `json:"took_away,omitempty"`
	// Starved is how many of the probe's runs were stopped at their time
	// limit starved of CPU (sandbox.Result.Starved): a failure then may be
	// the machine's load, not the sandbox, and the runner runs the probe
	// once more (see runTask).
	Starved int `json:"starved,omitempty"`
	// ClockStops is, for a check whose promise is not about time
	// (checks.Check.Untimed), or a cell of an attack whose program ends by
	// itself (attacks.ClockStopIsLoad), how many of its runs were stopped
	// at their clock: a failure, or a cell's stop, then is the machine's,
	// as a starved one is, and runs once more.
	ClockStops int `json:"clock_stops,omitempty"`
	// Timeouts are the probe's runs stopped at their time limit
	// (the Results its sessions observed): how late each kill landed.
	Timeouts []ProbeTimeout `json:"timeouts,omitempty"`
	// Cost is where the worker's time went (nil from a worker that
	// predates it, and in a reused result).
	Cost *ProbeCost `json:"cost,omitempty"`
}

// ProbeTimeout is one run of a probe stopped at its time limit.
type ProbeTimeout struct {
	Level  int   `json:"level"`
	LateMS int64 `json:"late_ms"`
	// InitLateMS is, for a run the init stopped (L6), how late the init
	// woke (sandbox.Result.InitLate); nil otherwise.
	InitLateMS *int64 `json:"init_late_ms,omitempty"`
	// Backstop is set when the supervisor's backstop ended the run, the
	// init not having done so at the deadline (L6).
	Backstop bool `json:"backstop,omitempty"`
	Starved  bool `json:"starved,omitempty"`
}

// failing says whether the probe's verdict is a failure: a failed check
// or an escaped cell.
func (r *ProbeResult) failing() bool {
	return (r.Check != nil && !r.Check.Passed) || (r.Cell != nil && r.Cell.Escaped)
}

// verdict is the probe's verdict in one word, to compare repeats.
func (r *ProbeResult) verdict() string {
	switch {
	case r.Check != nil:
		return checkVerdict(r.Check.Passed)
	case r.Cell != nil:
		return cellVerdict(r.Cell.Escaped)
	}
	return "none"
}

// evidence is what the host saw in the probe's run.
func (r *ProbeResult) evidence() string {
	switch {
	case r.Check != nil:
		return r.Check.Evidence
	case r.Cell != nil && !r.Cell.Escaped && r.Cell.StoppedBy != "":
		// What stopped it, which holds how the run ended when no layer
		// did ("unexpected: timeout"): a flake's stop says its cause.
		return r.Cell.StoppedBy + ": " + r.Cell.Evidence
	case r.Cell != nil:
		return r.Cell.Evidence
	}
	return ""
}

// probeRun is one task's outcome: the worker's result, or why there is
// none, and what it cost.
type probeRun struct {
	result *ProbeResult
	err    error
	hung   bool
	wall   time.Duration
	cpu    time.Duration // of the worker and everything it waited for
	// reused is set for a result taken from an earlier run (its wall and
	// CPU time are that run's): nothing ran.
	reused bool
}

// inconclusive says whether the verdict may be the machine's load's and
// not the sandbox's: a run of the probe was stopped at its time limit
// starved of CPU, and the verdict is a failure, or a cell that reads
// stopped. An attack's program stopped by the clock before it tried
// reads "stopped" whatever the sandbox would have done; under a defect
// that lets it through, that verdict is a false "the battery did not
// notice". So is a failed check not about time with a run stopped at its
// clock (ClockStops): its program waits on more than its own CPU (the
// host's proxy, its destinations), which the run-queue measure of
// starving does not see. And so is a cell whose program ends by itself
// stopped at its clock without starving: host_socket@L4 read stopped once
// in five that way, its program having sent nothing, and read_ssh_key@L5
// before it. Last, an escape that its judge called because the sandbox's
// stop had not come within a margin of time (timedEscape).
func (r *ProbeResult) inconclusive() bool {
	return (r.Starved > 0 || r.ClockStops > 0) && (r.failing() || r.Cell != nil) || r.timedEscape()
}

// timedEscape says whether the probe is a cell that escaped at a level
// expected to stop it, by a judge that decides by a margin of time
// (attacks.EscapeMayBeLoad). runaway_loop@L3 under cpu_soft_only, a
// defect that does not touch the wall clock, escaped once in five that
// way beside two busy loops: "still running, not killed, 1800 ms after it
// started", the supervisor's timer late by over 300 ms.
func (r *ProbeResult) timedEscape() bool {
	return r.Cell != nil && r.Cell.Escaped && attacks.EscapeMayBeLoad(r.Cell.Attack, r.Cell.Level)
}

// runTask runs one task in a worker (runWorker) and reads its verdict. An
// inconclusive verdict (see inconclusive) is one the machine's load may
// have made: the probe runs once more and the second verdict stands, its
// evidence saying so. A defect the probe catches fails it again.
//
// The task holds a place in pl, which release gives back. The second
// run takes the whole pool: it gives its place back and queues as a task
// that runs alone, since the load that starved the first run is mostly
// the harness's own other probes (with both cores busy beside it, the
// same probes starved twice in a row at eight at a time). With pl nil
// (a caller without a pool) it runs again in place.
func (r *Runner) runTask(ctx context.Context, t Task, pl *pool, release func()) probeRun {
	first := r.runTaskOnce(ctx, t)
	rerun := first.result != nil && first.result.inconclusive() && ctx.Err() == nil
	if rerun && !first.result.failing() && r.idle(t.Probe) {
		// A cell whose program loops at the lowest priority (Runner.Idle)
		// is starved by design and judged by the clock alone: its stop is
		// no less a verdict for it. (Of the 407 probes a repeat run beside
		// two busy loops ran twice, alone, 340 were such cells.)
		rerun = false
	}
	r.stops.add(t, first.result, rerun)
	if !rerun {
		return first
	}
	alone := ""
	if pl != nil {
		release()
		whole, err := pl.wait(ctx, pl.enqueueWhole(r.idle(t.Probe)))
		if err != nil {
			return first // interrupted: the run is over anyway
		}
		defer whole()
		alone = ", the second alone"
	}
	again := r.runTaskOnce(ctx, t)
	r.stops.add(t, again.result, false)
	again.wall += first.wall
	again.cpu += first.cpu
	if again.result != nil {
		read := "failed"
		if !first.result.failing() {
			read = "read stopped"
		}
		why := fmt.Sprintf("%d of its runs stopped at the time limit starved of CPU", first.result.Starved)
		switch {
		case first.result.Starved == 0 && first.result.ClockStops == 0:
			why = "an escape its judge called by a margin of time"
		case first.result.Starved == 0:
			why = fmt.Sprintf("%d of its runs stopped at a clock the check does not test", first.result.ClockStops)
			if first.result.Cell != nil {
				why = fmt.Sprintf("%d of its runs stopped at the clock, which its program, one that ends by itself, should not meet", first.result.ClockStops)
			}
		}
		note := fmt.Sprintf(" (run twice%s: the first run %s with %s, which the machine's load decides)", alone, read, why)
		if again.result.Check != nil {
			again.result.Check.Evidence += note
		} else {
			again.result.Cell.Evidence += note
		}
	}
	return again
}

// runTaskOnce runs one task in a worker once and reads its verdict.
func (r *Runner) runTaskOnce(ctx context.Context, t Task) probeRun {
	t.Slots = r.Jobs
	w := runWorker(ctx, r.Timeout, t.Probe, func(ctx context.Context) *exec.Cmd { return r.Worker(ctx, t) })
	out := probeRun{err: w.err, hung: w.hung, wall: w.wall, cpu: w.cpu}
	defer func() { r.costs.add(t, out) }()
	if w.err != nil {
		return out
	}
	var res ProbeResult
	if err := json.Unmarshal(w.stdout, &res); err != nil || (res.Check == nil) == (res.Cell == nil) {
		if w.waitErr != nil {
			out.err = fmt.Errorf("worker for %s failed (%v): %s", t.Probe, w.waitErr, w.stderr)
		} else {
			out.err = fmt.Errorf("worker for %s printed no verdict (%v): %s", t.Probe, err, w.stderr)
		}
		return out
	}
	out.result = &res
	return out
}

// workerRun is what one worker process gave: its standard output, the
// last line of its standard error and how it ended, or why it gave
// nothing (err: it could not start, it ran past its time, the run was
// interrupted), and what it cost.
type workerRun struct {
	stdout    []byte
	stderr    string
	waitErr   error
	err       error
	hung      bool
	wall, cpu time.Duration
}

// runWorker runs the worker command makes for what (a probe, a mutant's
// column), bounded by timeout. Everything the worker leaves behind is
// cleaned up: its processes, whatever they forked (found by their tags
// and by a control group when one can be made), and its temporary
// directory.
func runWorker(ctx context.Context, timeout time.Duration, what string, command func(ctx context.Context) *exec.Cmd) workerRun {
	start := time.Now()
	out := workerRun{}
	sweepStaleTemp()
	tmp, err := os.MkdirTemp("", tmpPrefix+owner+"-")
	if err != nil {
		out.err = err
		return out
	}
	defer os.RemoveAll(tmp)
	// The sandboxed programs' identity must reach sessions made below it.
	if err := os.Chmod(tmp, 0o711); err != nil {
		out.err = err
		return out
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := command(wctx)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.Dir = tmp
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &limitedBuffer{buf: &stderr, max: 64 << 10}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// On timeout or interrupt: ask the worker to stop (it cleans up after
	// its check or cell), then kill it.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		out.err = fmt.Errorf("starting worker: %w", err)
		return out
	}
	jail := newJail(cmd.Process.Pid)
	jail.add(cmd.Process.Pid)
	out.waitErr = cmd.Wait()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	procfs.KillWithArgPrefix(procfs.TagPrefix(cmd.Process.Pid), 10*time.Second)
	jail.close()
	out.wall = time.Since(start)
	if st := cmd.ProcessState; st != nil {
		out.cpu = st.UserTime() + st.SystemTime()
	}
	switch {
	case errors.Is(wctx.Err(), context.DeadlineExceeded):
		out.hung = true
		out.err = fmt.Errorf("%w: %s gave no verdict within %v", errHung, what, timeout)
	case ctx.Err() != nil:
		out.err = ctx.Err()
	}
	out.stdout, out.stderr = stdout.Bytes(), lastLine(strings.TrimSpace(stderr.String()))
	return out
}

// assemble builds the reports of one run of probes (a defect's, or the
// baseline's) in report order: each probe's result from ran when it ran,
// else from base (the baseline's result, which an unreached probe keeps).
func (r *Runner) assemble(defect string, probes []Probe, ran map[string]*ProbeResult, base *WorkerResult) *WorkerResult {
	w := &WorkerResult{
		Checks: &report.Checks{Identity: r.Identity, Defect: defect, Checks: []report.Check{}},
		Attacks: &report.Attacks{Identity: r.Identity, Defect: defect, Attacks: []string{}, Levels: []int{},
			Suites: map[string]verdict.Suite{}, Expected: map[string]int{}, Cells: []report.Cell{}},
	}
	levels := map[int]bool{}
	for _, p := range probes {
		res := ran[p.ID]
		if p.IsCell() {
			c, _ := verdict.ParseCell(p.ID)
			l, _ := c.Level()
			var cell report.Cell
			switch {
			case res != nil:
				cell = *res.Cell
			case base != nil:
				cell, _ = base.Attacks.Cell(c.Attack, l)
			default:
				continue
			}
			if _, seen := w.Attacks.Suites[c.Attack]; !seen {
				w.Attacks.Attacks = append(w.Attacks.Attacks, c.Attack)
				w.Attacks.Suites[c.Attack] = p.Suite
				if want, ok := r.Predictions.Baseline.Attacks[c.Attack]; ok {
					w.Attacks.Expected[c.Attack] = want
				}
			}
			levels[l] = true
			w.Attacks.Cells = append(w.Attacks.Cells, cell)
			continue
		}
		switch {
		case res != nil:
			w.Checks.Checks = append(w.Checks.Checks, *res.Check)
		case base != nil:
			for _, c := range base.Checks.Checks {
				if c.ID == p.ID {
					w.Checks.Checks = append(w.Checks.Checks, c)
				}
			}
		}
	}
	for l := 0; l < r.Predictions.u.Levels; l++ {
		if levels[l] {
			w.Attacks.Levels = append(w.Attacks.Levels, l)
		}
	}
	w.Checks.Tally()
	w.Attacks.Summarize()
	return w
}
