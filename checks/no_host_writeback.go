package checks

import (
	_ "embed" // the program's source
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

//go:embed programs/sync_all.py
var syncAll string

// writebackTries is how many times the check gives the program a dirty
// host file to write back. Any process on the machine may call sync
// while the program runs (a neighbouring run under a defect, the host
// itself): one clean file could be theirs, a clean file every time is
// the program's.
const writebackTries = 3

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
		f, err := os.CreateTemp(t.Root(), "dirty-*")
		t.NilError(err)
		defer f.Close()
		page := []byte(strings.Repeat("d", 64<<10))
		var out string
		runs, cleaned := 0, 0
		for ; runs < writebackTries; runs++ {
			_, err := f.WriteAt(page, 0)
			t.NilError(err)
			before := dirtyPages(t, f)
			t.Assert(before > 0, "the host's file %s has no dirty pages after a write: its filesystem writes through, and nothing would be tested", f.Name())
			res := t.runPython(Preset(6), sandbox.Command{}, syncAll)
			out = strings.TrimSpace(res.Stdout)
			t.Assert(strings.HasPrefix(out, "sync done"), "the program did not get through its calls: stdout %q, stderr %s", res.Stdout, lastLine(res.Stderr))
			if dirtyPages(t, f) > 0 {
				runs++
				break
			}
			cleaned++
		}
		t.Check(cleaned < writebackTries, "the host's dirty file was written back during each of %d runs of the program: %s", cleaned, out)
		// The host's own fsync cleans it: the pages were the kind a sync
		// writes back.
		t.NilError(f.Sync())
		t.Assert(dirtyPages(t, f) == 0, "the host's file stays dirty after its own fsync: nothing was tested")
		t.Evidence("the program: %s; the host's file %s kept its dirty pages (cleaned by someone in %d of %d runs), and its own fsync then cleaned them",
			out, f.Name(), cleaned, runs)
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
