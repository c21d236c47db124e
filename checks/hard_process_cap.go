package checks

import (
	"strings"
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/verdict"
)

var hardProcessCap = &Check{
	ID:      "hard_process_cap",
	Suite:   verdict.Hardening,
	Promise: "the process cap is hard: the 17th fork fails with EAGAIN, with no polling window",
	Level:   6,
	Untimed: true,
	Body: func(t *T) {
		// The /proc monitor is taken away: the control group alone caps.
		p := Preset(6, notTimed, func(p *sandbox.Policy) { p.Processes.Max = 0 })
		tok := t.tagged()
		peak := evidence.PeakCount(tok, 2*time.Millisecond)
		res := t.runPython(p, sandbox.Command{}, `
import errno, os, time
made, refused = 0, 0
for _ in range(30):
    try:
        if os.fork() == 0:
            time.sleep(0.5)
            os._exit(0)
        made += 1
    except OSError as e:
        refused += e.errno == errno.EAGAIN
print("forked", made, "refused with EAGAIN", refused)
`, tok)
		seen, _ := peak.Stop()
		cap := Preset(6).Hardened.Cgroup.Pids
		t.Check(res.PidsPeak > 0 && res.PidsPeak <= cap, "the kernel counted %d processes and threads at once, over the cap of %d", res.PidsPeak, cap)
		t.Check(res.ForksRefused > 0, "the kernel refused no fork: %s", strings.TrimSpace(res.Stdout))
		t.Check(int(seen) <= cap, "the host saw %d of its processes at once", seen)
		t.Evidence("the kernel counted at most %d at once and refused %d forks; the host saw at most %d; %s",
			res.PidsPeak, res.ForksRefused, seen, strings.TrimSpace(res.Stdout))
	},
}
