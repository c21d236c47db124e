package checks

import (
	"strings"
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/tool"
)

var toolWording = &Check{
	ID:      "tool_wording",
	Promise: "the careful tool says why a run stopped and what to try, per reason",
	Level:   1,
	// Each stop's own layers, the kill of its processes, and the session
	// directory the refusal's quota is counted in.
	Touches: []string{"wall_clock", "cpu_limit", "address_space", "process_monitor", "pid_namespace", "tree_kill", "private_workdir"},
	Body: func(t *T) {
		// Each stop is a real one, made at the lowest level that has its
		// mechanism; what the check reads is the reply the model would.
		cases := []struct {
			reason sandbox.Reason
			says   string // the phrase only this reason's reply holds
			p      sandbox.Policy
			quota  int64
			code   string
		}{
			{sandbox.ReasonTimeout, "time limit", Preset(1), 0, "import time\ntime.sleep(30)"},
			// The reply is what is tested, not the limit's value: the
			// lowest CPU limit there is (1 s) stops the loop in half the
			// CPU of the preset's.
			{sandbox.ReasonCPU, "CPU limit", Preset(1, TimeLimits(cpuBound), cpuLimits(time.Second, 2*time.Second)), 0, "while True: pass"},
			// On a loaded machine Python's start alone can outlast the
			// preset's 1.5 s clock (seen in mutation runs at load 13),
			// which would word the stop as a timeout.
			{sandbox.ReasonMemory, "out of memory", Preset(1, TimeLimits(5*time.Second)), 0, "b = bytearray(512 << 20)"},
			// The process cap's monitor stops the bomb; on a loaded machine
			// its forks can take longer than the preset's 1.5 s clock,
			// which would word the stop as a timeout.
			{sandbox.ReasonProcesses, "too many processes", Preset(3, TimeLimits(5*time.Second)), 0, forkBomb},
			{sandbox.ReasonRefused, "not run", Preset(2), 1 << 20, "print('hello')"},
		}
		var worded []string
		for _, c := range cases {
			s := t.session(c.p, c.quota)
			if c.reason == sandbox.ReasonRefused {
				// The host fills the quota, so that only the quota is tested.
				t.NilError(s.WriteFile("fill.bin", make([]byte, 2<<20)))
			}
			ctx, code := t.Context(), c.code
			if c.reason == sandbox.ReasonCPU {
				// Past the hard limit and a margin of CPU, the limit did not
				// bite: the host stops the loop there rather than let it
				// run to the 20 s clock, which a loaded machine needs for
				// the limit to bite but a broken limit only wastes.
				tag := "# " + token()
				ctx, code = t.untilCPUOfCode(tag, c.p.Limits.CPUHard+1500*time.Millisecond), tag+"\n"+c.code
			}
			reply, err := tool.NewCareful(s).Call(ctx, code)
			if c.reason == sandbox.ReasonCPU && ctx.Err() != nil {
				t.Check(false, "the loop ran past %v of CPU and the host stopped it: the CPU limit did not", c.p.Limits.CPUHard+1500*time.Millisecond)
				continue
			}
			t.NilError(err)
			text := reply.Text
			t.Check(strings.Contains(text, c.says), "a %s stop is not worded as one: %q", c.reason, firstLine(text))
			t.Check(strings.Contains(text, "What to try"), "the reply for a %s stop says nothing to try: %q", c.reason, firstLine(text))
			for _, other := range cases {
				if other.reason != c.reason {
					t.Check(!strings.Contains(text, other.says), "the reply for a %s stop speaks of %q", c.reason, other.says)
				}
			}
			worded = append(worded, string(c.reason))
		}
		t.Evidence("distinct wording and advice for %s", strings.Join(worded, ", "))
	},
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
