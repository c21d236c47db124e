package checks

import (
	_ "embed" // the program's source
	"os"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

//go:embed programs/sync_all.py
var syncAll string

// The program's sync and any other process's sync look the same from
// the host: the dirty file comes back clean. Two things keep others'
// syncs from being blamed on the program:
//   - The check holds a machine-wide lock while it measures. The one
//     neighbour that syncs again and again is this same check under a
//     defect that lets sync through (sync_allowed), run by a concurrent
//     worker of the mutation run.
//   - Each run that cleaned the file is paired with a control window as
//     long as the run, in which the program does not run. The program is
//     blamed early only while every control stayed dirty; while the host
//     syncs too, it is blamed only if no run of maxRuns kept the file
//     dirty.
const (
	// blameRuns is how many runs that cleaned the file, beside controls
	// that all stayed dirty, make the verdict.
	blameRuns = 4
	// maxRuns bounds the tries on a host that syncs all the time.
	maxRuns = 16
)

var noHostWriteback = &Check{
	ID:      "no_host_writeback",
	Suite:   verdict.Hardening,
	Promise: "at L6 the program's sync and syncfs write back none of the host's dirty data",
	Level:   6,
	Body: func(t *T) {
		// A file of the host's, outside the run's root, with dirty pages:
		// the kernel writes them back on its own only after
		// dirty_expire_centisecs (30 s), so a file clean right after the
		// run was written back by someone's sync.
		t.machineLock("no_host_writeback")
		f, err := os.CreateTemp(t.Root(), "dirty-*")
		t.NilError(err)
		defer f.Close()
		page := []byte(strings.Repeat("d", 64<<10))
		dirty := func() {
			t.Helper()
			_, err := f.WriteAt(page, 0)
			t.NilError(err)
			t.Assert(dirtyPages(t, f) > 0, "the host's file %s has no dirty pages after a write: its filesystem writes through, and nothing would be tested", f.Name())
		}
		var out string
		runs, cleaned, controls, noisy := 0, 0, 0, 0
		kept := false
		for runs < maxRuns && (cleaned < blameRuns || noisy > 0) {
			runs++
			dirty()
			began := time.Now()
			res := t.runPython(Preset(6), sandbox.Command{}, syncAll)
			out = strings.TrimSpace(res.Stdout)
			t.Assert(strings.HasPrefix(out, "sync done"), "the program did not get through its calls: stdout %q, stderr %s", res.Stdout, lastLine(res.Stderr))
			window := time.Since(began)
			if dirtyPages(t, f) > 0 {
				kept = true
				break
			}
			cleaned++
			// The control: as long as the run's window, without the program.
			dirty()
			time.Sleep(window)
			controls++
			if dirtyPages(t, f) == 0 {
				noisy++
			}
		}
		t.Check(kept, "the host's dirty file was written back during each of %d runs of the program (%s), and during %d of %d control windows as long as a run without it",
			cleaned, out, noisy, controls)
		// The host's own fsync cleans it: the pages were the kind a sync
		// writes back.
		dirty()
		t.NilError(f.Sync())
		t.Assert(dirtyPages(t, f) == 0, "the host's file stays dirty after its own fsync: nothing was tested")
		t.Evidence("the program: %s; the host's file %s kept its dirty pages (someone cleaned it in %d of %d runs and %d of %d control windows), and its own fsync then cleaned them",
			out, f.Name(), cleaned, runs, noisy, controls)
	},
}

// dirtyPages is the number of f's pages in the page cache that are
// dirty or under writeback, from cachestat(2) (Linux 6.5).
func dirtyPages(t *T, f *os.File) uint64 {
	t.Helper()
	var rng struct{ off, len uint64 }                 // struct cachestat_range: the whole file
	var cs struct{ cache, dirty, wb, ev, rev uint64 } // struct cachestat
	_, _, errno := unix.Syscall6(unix.SYS_CACHESTAT, f.Fd(), uintptr(unsafe.Pointer(&rng)), uintptr(unsafe.Pointer(&cs)), 0, 0, 0)
	t.Assert(errno == 0, "cachestat on the host's file: %v (the kernel needs 6.5 or later)", errno)
	return cs.dirty + cs.wb
}
