// Package experiments measures the course notes' three experiments: the
// CPU limit on PID 1 of a PID namespace, RLIMIT_NPROC against the process
// monitor, and one layer hiding another's defect. Each returns the figures
// it measured as a report.Experiment; none of them is a verdict.
//
// It imports the sandbox, the checks (the layer-hiding experiment is the
// tree-kill check's measurement with a defect on, run in a helper process
// of its own) and report.
package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/checks"
	"sandboxlab/mutants"
	"sandboxlab/report"
	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
	"sandboxlab/sandbox/reexec"
)

// Experiment is one of the course notes' experiments, measured here.
type Experiment struct {
	// ID names it on the command line.
	ID string
	// Run measures it.
	Run func(ctx context.Context) (*report.Experiment, error)
}

// All lists the experiments in the order of the notes.
var All = []*Experiment{
	{ID: "cpu-quirk", Run: cpuQuirk},
	{ID: "nproc", Run: nprocExperiment},
	{ID: "layer-hiding", Run: layerHiding},
}

// Lookup returns the experiment with the given id, or nil.
func Lookup(id string) *Experiment {
	for _, e := range All {
		if e.ID == id {
			return e
		}
	}
	return nil
}

func identity() report.Identity {
	return report.Identity{UID: os.Geteuid(), Root: sandbox.HostRoot(), ProgramUID: sandbox.HostIdentity().UID}
}

func seconds(d time.Duration) float64 { return math.Round(d.Seconds()*100) / 100 }

// cpuQuirk: a busy loop under a 2 s CPU limit stops after about 2.0 s of
// CPU with no namespace and about 3.0 s as PID 1 of a PID namespace, which
// ignores SIGXCPU and dies only at the hard limit; with the soft limit
// alone, PID 1 is not stopped by the CPU limit at all.
func cpuQuirk(ctx context.Context) (*report.Experiment, error) {
	cases := []struct {
		name string
		p    sandbox.Policy
	}{
		{"busy loop, no namespace (L1), CPU 2 s soft / 3 s hard", checks.Preset(1, checks.TimeLimits(10*time.Second))},
		{"busy loop as PID 1 of a PID namespace (L3), CPU 2 s soft / 3 s hard", checks.Preset(3, checks.TimeLimits(10*time.Second))},
		{"busy loop as PID 1 (L3), CPU 2 s soft only, wall clock 6 s", checks.Preset(3, checks.TimeLimits(6*time.Second), func(p *sandbox.Policy) { p.Limits.CPUHard = 0 })},
	}
	results := make([]*sandbox.Result, len(cases))
	errs := make([]error, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = sandbox.Run(ctx, c.p, sandbox.Command{Path: evidence.Python, Args: []string{"-c", "while True: pass"}})
		}()
		if i == 1 {
			wg.Wait() // two cores: the third runs after the first two
		}
	}
	wg.Wait()
	e := &report.Experiment{ID: "cpu-quirk", Title: "A CPU limit on PID 1 of a PID namespace", Identity: identity()}
	for i, c := range cases {
		if errs[i] != nil {
			return nil, fmt.Errorf("%s: %w", c.name, errs[i])
		}
		r := results[i]
		e.Rows = append(e.Rows, report.ExperimentRow{Case: c.name, Outcome: fmt.Sprintf("stopped by %s after %.2f s wall", stopName(r.Reason), r.Wall.Seconds()), Value: seconds(r.CPU), Unit: "s CPU"})
	}
	e.Finding = fmt.Sprintf("The soft limit stopped the loop after %.2f s of CPU without a namespace; as PID 1 only the hard limit did, after %.2f s; with the soft limit alone PID 1 ran until the %s.",
		results[0].CPU.Seconds(), results[1].CPU.Seconds(), stopName(results[2].Reason))
	return e, nil
}

func stopName(r sandbox.Reason) string {
	switch r {
	case sandbox.ReasonCPU:
		return "the CPU limit"
	case sandbox.ReasonTimeout:
		return "wall clock"
	case sandbox.ReasonProcesses:
		return "the process monitor"
	}
	return string(r)
}

// nprocHelper is the helper that sets RLIMIT_NPROC to argv[1] and execs
// the program in argv[2:] (the nproc experiment's first case).
const nprocHelper = "sandboxlab-nproc-probe"

func init() {
	reexec.Register(nprocHelper, nprocMain)
	reexec.Register(layerHidingHelper, layerHidingMain)
}

func nprocMain(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, nprocHelper+": want N PROGRAM [ARGS]")
		return 2
	}
	var n uint64
	fmt.Sscan(args[0], &n)
	if err := syscall.Setrlimit(unix.RLIMIT_NPROC, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
		fmt.Fprintln(os.Stderr, "setting RLIMIT_NPROC:", err)
		return 125
	}
	err := syscall.Exec(args[1], args[1:], []string{"PATH=/usr/bin:/bin"})
	fmt.Fprintln(os.Stderr, "exec:", err)
	return 127
}

// spawner asks for 30 processes, each living a second, and keeps trying
// when fork fails.
const spawner = `
import os, sys, time
started, deadline = 0, time.time() + 1.0
while started < 30 and time.time() < deadline:
    try:
        if os.fork() == 0:
            time.sleep(1)
            os._exit(0)
        started += 1
    except OSError:
        time.sleep(0.01)
time.sleep(1)
`

// nprocExperiment: RLIMIT_NPROC=5 does not bind root, even in a user
// namespace whose root is mapped to host root (0→0); the monitor caps the
// same program at 16. This experiment alone maps the program to host
// root, deliberately, to show what the sandbox's 65534 mapping avoids;
// the program is this file's fixed spawner, bounded at 30 processes.
func nprocExperiment(ctx context.Context) (*report.Experiment, error) {
	e := &report.Experiment{ID: "nproc", Title: "A limit that does nothing for the user who matters: RLIMIT_NPROC", Identity: identity()}
	// Case 1: our own helper, not the sandbox: the sandbox never maps to 0.
	tok := procfs.Tag()
	defer procfs.KillWithArg(tok, 10*time.Second)
	uid, gid := os.Getuid(), os.Getgid()
	peak := peakTagged(tok, func() error {
		cmd := reexec.CommandContext(ctx, nprocHelper, "5", evidence.Python, "-c", spawner, tok)
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
			Pdeathsig:   syscall.SIGKILL,
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		return nil
	})
	if peak.err != nil {
		return nil, fmt.Errorf("RLIMIT_NPROC case: %w", peak.err)
	}
	who := fmt.Sprintf("root in a user namespace mapped 0→%d", uid)
	if uid != 0 {
		who = fmt.Sprintf("uid %d in a user namespace (not host root: the 0→0 case needs it)", uid)
	}
	e.Rows = append(e.Rows, report.ExperimentRow{Case: "RLIMIT_NPROC=5, " + who + ", asking for 30 processes",
		Outcome: fmt.Sprintf("%d children started", peak.most-1), Value: float64(peak.most - 1), Unit: "processes started"})

	// Case 2: the same program under the sandbox's monitor (L3).
	tok2 := procfs.Tag()
	defer procfs.KillWithArg(tok2, 10*time.Second)
	var res *sandbox.Result
	peak2 := peakTagged(tok2, func() error {
		var err error
		res, err = sandbox.Run(ctx, sandbox.MustPreset(3), sandbox.Command{Path: evidence.Python, Args: []string{"-c", spawner, tok2}})
		return err
	})
	if peak2.err != nil {
		return nil, fmt.Errorf("monitor case: %w", peak2.err)
	}
	e.Rows = append(e.Rows, report.ExperimentRow{Case: fmt.Sprintf("the /proc monitor of L3 (cap 16, root mapped to %d), asking for 30", sandbox.HostIdentity().UID),
		Outcome: fmt.Sprintf("stopped by %s after %d ms", stopName(res.Reason), res.Wall.Milliseconds()), Value: float64(peak2.most), Unit: "processes seen at most"})
	e.Finding = fmt.Sprintf("With RLIMIT_NPROC=5 the program started %d of 30. The monitor stopped the run once it passed 16; the host saw at most %d at once: "+
		"polling every 5 ms, a fork loop this fast can overshoot the cap before the kill (a control group's pids.max would not).", peak.most-1, peak2.most)
	return e, nil
}

type peakResult struct {
	most int
	err  error
}

// peakTagged runs f while counting the live processes tagged with tok.
func peakTagged(tok string, f func() error) peakResult {
	peak := evidence.PeakCount(tok, 5*time.Millisecond)
	err := f()
	most, _ := peak.Stop()
	return peakResult{most: int(most), err: err}
}

// layerHiding: with the timeout killing only the first process, busy-loop
// children survive the timeout; with the CPU limit on it kills them soon
// after, before the tree-kill check looks, and the defect goes unseen.
// Each case runs in a helper process of its own with kill_leader_only
// switched on from its command line, as the mutation harness's workers
// do: this process's own switch is never touched.
func layerHiding(ctx context.Context) (*report.Experiment, error) {
	if !mutants.Compiled {
		return nil, mutants.ErrNotCompiled
	}
	e := &report.Experiment{ID: "layer-hiding", Title: "One layer hiding another's bug: a timeout that kills only the first process", Identity: identity()}
	for _, c := range []struct {
		name string
		cpu  string
	}{
		{"kill_leader_only, CPU limit on (2 s soft / 3 s hard)", "cpu-on"},
		{"kill_leader_only, CPU limit off", "cpu-off"},
	} {
		cmd := reexec.CommandContext(ctx, layerHidingHelper, string(mutants.KillLeaderOnly), c.cpu)
		out, err := cmd.Output()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var m treeMeasure
		if err == nil {
			err = json.Unmarshal(out, &m)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w (%s)", c.name, err, exitText(err))
		}
		if m.Failure != "" {
			return nil, fmt.Errorf("%s: %s", c.name, m.Failure)
		}
		e.Rows = append(e.Rows, report.ExperimentRow{Case: c.name, Outcome: fmt.Sprintf("found %v after the timeout", checks.TreeGrace), Value: float64(m.Survivors), Unit: "survivors"})
	}
	e.Finding = fmt.Sprintf("With the CPU limit on, the tree-kill check finds %v survivors and the defect passes; with it off, %v.", e.Rows[0].Value, e.Rows[1].Value)
	return e, nil
}

// layerHidingHelper is the helper that measures one case of layerHiding:
// argv is the defect to switch on and cpu-on or cpu-off.
const layerHidingHelper = "sandboxlab-layer-hiding"

// treeMeasure is what the helper prints.
type treeMeasure struct {
	Survivors int    `json:"survivors"`
	Failure   string `json:"failure,omitempty"`
}

func layerHidingMain(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, layerHidingHelper+": want DEFECT cpu-on|cpu-off")
		return 2
	}
	if err := mutants.Enable(args[0]); err != nil {
		fmt.Fprintln(os.Stderr, layerHidingHelper+":", err)
		return 1
	}
	p := checks.Preset(1)
	if args[1] == "cpu-off" {
		p = checks.Preset(1, checks.NoCPULimit)
	}
	var m treeMeasure
	var err error
	m.Survivors, m.Failure, err = checks.TreeSurvivors(context.Background(), p)
	if err != nil {
		fmt.Fprintln(os.Stderr, layerHidingHelper+":", err)
		return 1
	}
	json.NewEncoder(os.Stdout).Encode(m)
	return 0
}

// exitText is what a failed helper said on stderr.
func exitText(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}
