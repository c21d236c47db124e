package checks

import (
	_ "embed" // the program's source
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
	"sandboxlab/verdict"
)

//go:embed programs/aio_setup.py
var aioSetup string

var noMachineAIO = &Check{
	ID:      "no_machine_aio",
	Suite:   verdict.Hardening,
	Promise: "at L6 the program takes none of the machine's asynchronous I/O events: io_setup fails, and the host sees no aio ring in it",
	Level:   6,
	Body: func(t *T) {
		// fs.aio-max-nr is one count for the whole machine, whatever the
		// namespaces: a ring the program holds is taken from every other
		// process. The host sees each ring in its owner's maps.
		tok := t.tagged()
		var mu sync.Mutex
		rings, peak := 0, aioNr()
		before := peak
		w := evidence.Sample(tok, 10*time.Millisecond, func(_ time.Time, procs []procfs.Proc) {
			n := aioNr()
			for _, pr := range evidence.Programs(procs) {
				n := evidence.AIORings(pr.PID)
				mu.Lock()
				rings += n
				mu.Unlock()
			}
			mu.Lock()
			peak = max(peak, n)
			mu.Unlock()
		})
		res := t.runPython(Preset(6), sandbox.Command{}, aioSetup, tok, "1024", "0.5")
		w.Stop()
		out := strings.TrimSpace(res.Stdout)
		t.Assert(strings.HasPrefix(out, "io_setup "), "the program did not try io_setup: stdout %q, stderr %s", res.Stdout, lastLine(res.Stderr))
		t.Check(rings == 0, "the host saw an aio ring in the program's maps %d times: %s", rings, out)
		t.Check(strings.HasPrefix(out, "io_setup failed"), "the program got an aio context: %s", out)
		t.Evidence("the program: %s; no [aio] mapping in its maps; fs.aio-nr %d before, %d at most while it ran", out, before, peak)
	},
}

// aioNr is the machine's count of aio events in use, -1 when unreadable.
func aioNr() int {
	b, err := os.ReadFile("/proc/sys/fs/aio-nr")
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}
