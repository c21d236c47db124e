package checks

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/mutants"
	"sandboxlab/report"
	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
)

// Experiment is one of the course notes' experiments, measured here.
type Experiment struct {
	// ID names it on the command line.
	ID string
	// Run measures it.
	Run func(ctx context.Context) (*report.Experiment, error)
}

// Experiments lists the experiments in the order of the notes.
var Experiments = []*Experiment{
	{ID: "cpu-quirk", Run: cpuQuirk},
	{ID: "nproc", Run: nprocExperiment},
	{ID: "layer-hiding", Run: layerHiding},
}

// LookupExperiment returns the experiment with the given id, or nil.
func LookupExperiment(id string) *Experiment {
	for _, e := range Experiments {
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
		{"busy loop, no namespace (L1), CPU 2 s soft / 3 s hard", preset(1, timeLimits(10*time.Second))},
		{"busy loop as PID 1 of a PID namespace (L3), CPU 2 s soft / 3 s hard", preset(3, timeLimits(10*time.Second))},
		{"busy loop as PID 1 (L3), CPU 2 s soft only, wall clock 6 s", preset(3, timeLimits(6*time.Second), func(p *sandbox.Policy) { p.Limits.CPUHard = 0 })},
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

// nprocArg0 is the argv[0] under which this binary re-executes itself to
// set RLIMIT_NPROC and exec a program (the nproc experiment's helper).
const nprocArg0 = "sandboxlab-nproc-probe"

func init() {
	if len(os.Args) < 3 || os.Args[0] != nprocArg0 {
		return
	}
	var n uint64
	fmt.Sscan(os.Args[1], &n)
	if err := syscall.Setrlimit(unix.RLIMIT_NPROC, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
		fmt.Fprintln(os.Stderr, "setting RLIMIT_NPROC:", err)
		os.Exit(125)
	}
	err := syscall.Exec(os.Args[2], os.Args[2:], []string{"PATH=/usr/bin:/bin"})
	fmt.Fprintln(os.Stderr, "exec:", err)
	os.Exit(127)
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
	tok := token()
	defer procfs.KillWithArg(tok, 10*time.Second)
	uid, gid := os.Getuid(), os.Getgid()
	peak := peakTagged(tok, func() error {
		cmd := exec.CommandContext(ctx, "/proc/self/exe", "5", evidence.Python, "-c", spawner, tok)
		cmd.Args[0] = nprocArg0
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
	tok2 := token()
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
func layerHiding(ctx context.Context) (*report.Experiment, error) {
	if !mutants.Compiled {
		return nil, mutants.ErrNotCompiled
	}
	prev := mutants.Active()
	if err := mutants.Enable(string(mutants.KillLeaderOnly)); err != nil {
		return nil, err
	}
	defer mutants.Enable(string(prev))
	e := &report.Experiment{ID: "layer-hiding", Title: "One layer hiding another's bug: a timeout that kills only the first process", Identity: identity()}
	for _, c := range []struct {
		name string
		p    sandbox.Policy
	}{
		{"kill_leader_only, CPU limit on (2 s soft / 3 s hard)", preset(1)},
		{"kill_leader_only, CPU limit off", preset(1, noCPULimit)},
	} {
		var left int
		failure, err := withT(ctx, func(t *T) { left = treeSurvivors(t, c.p) })
		if err != nil {
			return nil, err
		}
		if failure != "" {
			return nil, fmt.Errorf("%s: %s", c.name, failure)
		}
		e.Rows = append(e.Rows, report.ExperimentRow{Case: c.name, Outcome: fmt.Sprintf("found %v after the timeout", treeGrace), Value: float64(left), Unit: "survivors"})
	}
	e.Finding = fmt.Sprintf("With the CPU limit on, the tree-kill check finds %v survivors and the defect passes; with it off, %v.", e.Rows[0].Value, e.Rows[1].Value)
	return e, nil
}

// withT runs body with a check's T outside any check, and returns the
// first failure it recorded ("" if none).
func withT(ctx context.Context, body func(t *T)) (string, error) {
	c := &Check{ID: "experiment", Body: body}
	var out report.Check
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx, recorder{}, &out)
	}()
	<-done
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if !out.Passed {
		return strings.TrimSpace(out.Evidence), nil
	}
	return "", nil
}
