package checks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/cgroup"
	"sandboxlab/sandbox/evidence"
)

var cpuLimit = &Check{
	ID:      "cpu_limit",
	Promise: "a busy loop is stopped by the CPU limit, also as PID 1 of a PID namespace",
	Level:   1,
	// The loops' 4 s of CPU are the most any check spends: they run under
	// the defects of the limits and clocks that stop them and of the PID
	// namespace that makes PID 1 wait for the hard limit, not under those
	// of the other limits, the environment or the directories every run
	// sets up.
	Touches: []string{"wall_clock", "cpu_limit", "pid_namespace", "reaper"},
	Body: func(t *T) {
		// The wall clock would stop the loop first: it is pushed back (and
		// the watchdog with it), and the host watches the loop's CPU time
		// instead, so that a loaded machine, where 3 s of CPU can take
		// tens of seconds, is no reason to fail.
		type run struct {
			name  string
			p     sandbox.Policy
			want  time.Duration
			res   *sandbox.Result
			err   error
			limit string
		}
		// The limits are the lowest there are (1 s soft, 2 s hard), not
		// the preset's 2 s and 3 s: the check tests that the kernel is
		// asked for them and that PID 1 runs on to the hard one, which
		// takes 3 s of CPU this way and 5 s the other, on every defect
		// that reaches the limits.
		limits := cpuLimits(time.Second, 2*time.Second)
		runs := []*run{
			{name: "no namespace", p: Preset(1, TimeLimits(cpuBackstop), limits), limit: "soft"},
			{name: "PID 1", p: Preset(3, TimeLimits(cpuBackstop), limits), limit: "hard"},
			// At L6 the init stays PID 1 and the program is its child,
			// which the soft limit stops (SIGXCPU).
			{name: "PID 2 (L6)", p: Preset(6, TimeLimits(cpuBackstop), limits), limit: "soft"},
		}
		runs[0].want, runs[1].want, runs[2].want = runs[0].p.Limits.CPU, runs[1].p.Limits.CPUHard, runs[2].p.Limits.CPU
		// All at once: each is CPU-bound, and there are two cores.
		var wg sync.WaitGroup
		for _, r := range runs {
			s := t.session(r.p, 0)
			tok := t.tagged()
			// Past the hard limit and a margin, the limit did not bite.
			ctx := t.untilCPU(tok, runs[1].want+1500*time.Millisecond)
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.res, r.err = s.Run(ctx, sandbox.Command{Path: evidence.Python, Args: []string{"-c", "while True: pass", tok}})
			}()
		}
		wg.Wait()
		l6 := runs[2]
		if errors.Is(l6.err, cgroup.ErrUnavailable) {
			// L6 needs a control group, which an ordinary user without a
			// delegated cgroup v2 subtree cannot have: it is refused, as it
			// must be (fail_closed), and its case is left out.
			runs, l6 = runs[:2], nil
		}
		for _, r := range runs {
			if errors.Is(r.err, context.Canceled) && r.res != nil {
				t.Log(fmt.Sprintf("%s: the loop ran past %v of CPU and was stopped by the check, not by the CPU limit", r.name, r.res.CPU.Round(time.Millisecond)))
				t.Fail()
				return
			}
			if !t.Check(r.err == nil && r.res != nil, "%s: the run failed: %v", r.name, r.err) {
				return
			}
			t.Check(r.res.Reason == sandbox.ReasonCPU, "%s: the loop ended with %s after %v of CPU, not by the CPU limit",
				r.name, r.res.Reason, r.res.CPU.Round(time.Millisecond))
		}
		// rusage reads under the limit on a loaded VM (1.8 s for 2 s,
		// 2.6 s for 3 s were seen), about alike for two runs side by side:
		// the soft limit is checked with a wide margin, and PID 1 by
		// running on past it towards the hard limit, a second later.
		soft, pid1 := runs[0].res.CPU, runs[1].res.CPU
		t.Check(soft > runs[0].want-700*time.Millisecond && soft < runs[0].want+500*time.Millisecond,
			"without a namespace the loop stopped after %v of CPU; the soft limit is %v", soft.Round(time.Millisecond), runs[0].want)
		t.Check(pid1-soft > 400*time.Millisecond && pid1 < runs[1].want+500*time.Millisecond,
			"as PID 1 the loop stopped after %v of CPU, %v without a namespace: it should run on to the hard limit %v",
			pid1.Round(time.Millisecond), soft.Round(time.Millisecond), runs[1].want)
		var pid2 *sandbox.Result
		if l6 != nil {
			pid2 = l6.res
		}
		pid2Case(t, pid2, runs[0].want, runs[1].want, soft, pid1)
	},
}

// pid2Case checks the L6 run of cpu_limit (nil where L6 is unavailable):
// as PID 2 the loop stops at the soft limit, by SIGXCPU, as it does
// without a namespace. It sets the check's evidence, with the CPU time
// the loop took without a namespace and as PID 1.
func pid2Case(t *T, res *sandbox.Result, soft, hard, noNS, pid1 time.Duration) {
	if res == nil {
		t.Evidence("stopped after %.2f s of CPU without a namespace, %.2f s as PID 1 (soft %v, hard %v); L6 unavailable here",
			noNS.Seconds(), pid1.Seconds(), soft, hard)
		return
	}
	pid2 := res.CPU
	t.Check(res.Signal == "SIGXCPU" && pid2 > soft-700*time.Millisecond && pid2 < soft+500*time.Millisecond,
		"as PID 2 (L6) the loop stopped by %s after %v of CPU; the soft limit is %v", res.Signal, pid2.Round(time.Millisecond), soft)
	t.Evidence("stopped after %.2f s of CPU without a namespace, %.2f s as PID 1, %.2f s as PID 2 at L6 (soft %v, hard %v)",
		noNS.Seconds(), pid1.Seconds(), pid2.Seconds(), soft, hard)
}
