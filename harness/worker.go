package harness

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"sync"
	"syscall"

	"sandboxlab/attacks"
	"sandboxlab/checks"
	"sandboxlab/mutants"
	"sandboxlab/sandbox"
	"sandboxlab/sandbox/reexec"
	"sandboxlab/verdict"
)

// workerName is the helper the runner starts for each probe run: this
// binary (sandboxlab, or a test binary of this package) with one defect
// on (or none, for the baseline), running one check or one attack cell.
const workerName = "sandboxlab-mutant"

func init() { reexec.Register(workerName, workerMain) }

// WorkerCommand is the Runner's Worker for the real probes: this binary
// again, as the worker helper, for task t. The binary must call
// reexec.Init first thing in main (or TestMain).
func WorkerCommand(ctx context.Context, t Task) *exec.Cmd {
	args := []string{"--probe", t.Probe, "--defect", t.Defect}
	if t.Cover {
		args = append(args, "--cover")
	}
	if t.Without != "" {
		args = append(args, "--without", t.Without)
	}
	if t.Plain {
		args = append(args, "--plain")
	}
	if t.Slots > 0 {
		args = append(args, "--slots", strconv.Itoa(t.Slots))
	}
	return reexec.CommandContext(ctx, workerName, args...)
}

// workerMain runs the probe its --probe names with the defect its
// --defect names switched on, and prints one ProbeResult in JSON.
func workerMain(args []string) int {
	started := cpuOf(syscall.RUSAGE_SELF)
	fs := flag.NewFlagSet(workerName, flag.ContinueOnError)
	probe := fs.String("probe", "", "the check's id or the attack cell (attack@L<n>) to run")
	defect := fs.String("defect", "", "the planted defect to switch on")
	cover := fs.Bool("cover", false, "record the planted sites the probe reaches")
	without := fs.String("without", "", "a layer to take away from every policy the probe runs")
	plain := fs.Bool("plain", false, "undo the layers a check takes away on purpose")
	slots := fs.Int("slots", 0, "how many of the host's run slots the probe's runs may use (0: the default)")
	if err := fs.Parse(args); err != nil {
		return verdict.ExitInternal
	}
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "%s: %s: %v\n", workerName, *probe, err)
		return verdict.ExitInternal
	}
	if err := mutants.Enable(*defect); err != nil {
		return fail(err)
	}
	if *cover {
		if err := mutants.Cover(-1); err != nil {
			return fail(err)
		}
	}
	// The runner asks a worker to stop with SIGTERM; it then cleans up
	// after the check or cell under way.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var ended endedRuns
	var spent runCosts
	runs := probeRuns{queue: sandbox.Queue{Max: *slots}, observe: func(r *sandbox.Result) {
		ended.observe(r)
		spent.observe(r)
	}}
	res, err := runProbe(ctx, *probe, *without, *plain, runs)
	if err != nil {
		return fail(err)
	}
	for _, to := range ended.timeouts() {
		pt := ProbeTimeout{Level: to.Level, LateMS: to.KillLate.Milliseconds(),
			Backstop: to.StoppedBy == sandbox.StoppedByBackstop, Starved: to.Starved}
		if to.StoppedBy == sandbox.StoppedByInit {
			ms := to.InitLate.Milliseconds()
			pt.InitLateMS = &ms
		}
		res.Timeouts = append(res.Timeouts, pt)
		if to.Starved {
			res.Starved++
		}
	}
	res.ClockStops = clockStops(res)
	if *cover {
		reached, err := mutants.Reached()
		if err != nil {
			return fail(err)
		}
		for _, id := range reached {
			res.Reached = append(res.Reached, string(id))
		}
	}
	res.Cost = spent.done(started)
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		return fail(err)
	}
	return verdict.ExitOK
}

// clockStops is how many of res's runs stopped at their clock when that
// says more of the machine than of the sandbox (ProbeResult.ClockStops):
// res is a check whose promise is not about time, or a cell of an attack
// whose program ends by itself.
func clockStops(res *ProbeResult) int {
	if len(res.Timeouts) == 0 {
		return 0
	}
	switch {
	case res.Check != nil:
		if cs, err := checks.Select([]string{res.Check.ID}, nil); err != nil || !cs[0].Untimed {
			return 0
		}
	case res.Cell != nil:
		if !attacks.ClockStopIsLoad(res.Cell.Attack) {
			return 0
		}
	default:
		return 0
	}
	return len(res.Timeouts)
}

// runProbe runs one check, or one attack at one level.
func runProbe(ctx context.Context, probe, without string, plain bool, runs probeRuns) (*ProbeResult, error) {
	cell, err := verdict.ParseCell(probe)
	if err != nil {
		res := &ProbeResult{}
		took := map[string]bool{}
		rep, err := checks.RunAll(ctx, checks.Options{Only: []string{probe}, Without: without, Plain: plain,
			Queue: runs.queue, Observe: runs.observe,
			TookAway: func(layer string) {
				if !took[layer] {
					took[layer] = true
					res.TookAway = append(res.TookAway, layer)
				}
			}})
		if err != nil {
			return nil, err
		}
		if len(rep.Checks) != 1 {
			return nil, fmt.Errorf("ran %d checks", len(rep.Checks))
		}
		res.Check = &rep.Checks[0]
		res.Layers = sandbox.LayersOn(sandbox.MustPreset(res.Check.Level))
		return res, nil
	}
	level, ok := cell.Level()
	if !ok {
		return nil, fmt.Errorf("%s is not a level", cell.Column)
	}
	rep, err := attacks.Run(ctx, attacks.Options{Only: []string{cell.Attack}, Levels: []int{level}, Without: without,
		Queue: runs.queue, Observe: runs.observe})
	if err != nil {
		return nil, err
	}
	if len(rep.Cells) != 1 {
		return nil, errors.New("the attack has no cell at that level")
	}
	return &ProbeResult{Cell: &rep.Cells[0], Layers: sandbox.LayersOn(sandbox.MustPreset(level))}, nil
}

// probeRuns is what a probe's sessions are given: how they use the
// host's run slots, and who sees their Results.
type probeRuns struct {
	queue   sandbox.Queue
	observe func(*sandbox.Result)
}

// endedRuns gathers the Results of a probe's runs that were stopped at
// their time limit, in the order they ended: what the runner needs to
// tell a verdict the machine's load decided (a starved run) from one the
// sandbox did, and to gather the kill lateness of many runs.
type endedRuns struct {
	mu  sync.Mutex
	log []*sandbox.Result
}

func (e *endedRuns) observe(r *sandbox.Result) {
	if r.Reason != sandbox.ReasonTimeout {
		return
	}
	e.mu.Lock()
	e.log = append(e.log, r)
	e.mu.Unlock()
}

func (e *endedRuns) timeouts() []*sandbox.Result {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.log)
}

// IdleProbe is the Runner's Idle for the real probes: whether probe is a
// cell of an attack whose program runs at the lowest priority
// (attacks.IdleCPU).
func IdleProbe(probe string) bool {
	c, err := verdict.ParseCell(probe)
	return err == nil && attacks.IdleCPU(c.Attack)
}
