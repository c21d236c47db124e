package checks

import (
	"os"
	"path/filepath"
	"strconv"

	"gotest.tools/v3/assert"

	"sandboxlab/sandbox"
)

var openFilesLimit = &Check{
	ID:      "open_files_limit",
	Promise: "the 65th open file fails",
	Level:   1,
	Body: func(t *T) {
		p := preset(1)
		tok := t.tagged()
		// The host counts the program's descriptors in /proc while it
		// holds as many as it could open.
		stop := peakOf(tok, func(pid int) int {
			fds, _ := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
			return len(fds)
		})
		t.runPython(p, sandbox.Command{Dir: t.ownedDir("app")}, `
import time
held = []
try:
    for i in range(100):
        held.append(open("/dev/null"))
finally:
    time.sleep(0.4)
`, tok)
		most := stop()
		assert.Check(t, most > 0, "the host never saw the program's descriptors")
		assert.Check(t, most <= p.Limits.OpenFiles, "the program held %d descriptors; the limit is %d", most, p.Limits.OpenFiles)
		assert.Check(t, most >= p.Limits.OpenFiles-8, "the program held only %d descriptors: the check did not reach the limit", most)
		t.Evidence("trying for 100 files, the program held at most %d descriptors (limit %d)", most, p.Limits.OpenFiles)
	},
}
