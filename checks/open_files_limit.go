package checks

import (
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
)

var openFilesLimit = &Check{
	ID:      "open_files_limit",
	Promise: "the 65th open file fails",
	Level:   1,
	Body: func(t *T) {
		p := Preset(1)
		tok := t.tagged()
		// The host counts the program's descriptors in /proc while it
		// holds as many as it could open.
		peak := evidence.PeakOf(tok, 10*time.Millisecond, func(pid int) int64 { return int64(evidence.OpenFDs(pid)) })
		t.runPython(p, sandbox.Command{Dir: t.ownedDir("app")}, `
import time
held = []
try:
    for i in range(100):
        held.append(open("/dev/null"))
finally:
    time.sleep(0.4)
`, tok)
		held, _ := peak.Stop()
		most := int(held)
		t.Check(most > 0, "the host never saw the program's descriptors")
		t.Check(most <= p.Limits.OpenFiles, "the program held %d descriptors; the limit is %d", most, p.Limits.OpenFiles)
		t.Check(most >= p.Limits.OpenFiles-8, "the program held only %d descriptors: the check did not reach the limit", most)
		t.Evidence("trying for 100 files, the program held at most %d descriptors (limit %d)", most, p.Limits.OpenFiles)
	},
}
