package checks

import (
	_ "embed" // the program's source
	"strings"

	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

//go:embed programs/signal_pid1.py
var signalPID1 string

var initIgnoresSignals = &Check{
	ID:      "init_ignores_signals",
	Suite:   verdict.Hardening,
	Promise: "at L6 no signal the program sends PID 1, by any call with any si_code, nor a trace, ends or stops the init",
	Level:   6,
	Body: func(t *T) {
		// Go's runtime reads a SIGSEGV whose si_code is not SI_USER as a
		// fault of its own: an init that kept its handlers crashes, and
		// the run ends with the init's status. The host sees the
		// program's own exit 0 only if the init lived to report it.
		res := t.runPython(Preset(6), sandbox.Command{}, signalPID1, "0.3")
		t.Assert(res.Reason == sandbox.ReasonExited && res.ExitCode == 0,
			"the run ended %s (exit code %d: %s), not with the program's own exit 0", res.Reason, res.ExitCode, res.Message)
		report, found := strings.CutPrefix(strings.TrimSpace(res.Stdout), "delivered ")
		t.Assert(found, "the program did not finish its signals: stdout %q", res.Stdout)
		t.Check(strings.Contains(report, "rt_sigqueueinfo=") && !strings.Contains(report, "rt_sigqueueinfo=0"),
			"the kernel accepted no forged si_code, so nothing was tested: %s", report)
		t.Check(strings.Contains(report, "ptrace=0"), "the program could trace PID 1: %s", report)
		t.Evidence("the program signalled PID 1 (%s) and its run ended exited 0, reported by the init", report)
	},
}
