package checks

import (
	_ "embed" // the program's source
	"slices"
	"strings"
	"sync"
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
	"sandboxlab/verdict"
)

//go:embed programs/watch_dir.py
var watchDir string

// watchedDir is a system directory of the program's root: in it the
// root holds the host's own inode, which the host's processes use.
const watchedDir = "/usr/bin"

var noHostWatch = &Check{
	ID:      "no_host_watch",
	Suite:   verdict.Hardening,
	Promise: "at L6 the program holds no inotify watch on a directory the host's processes use",
	Level:   6,
	Body: func(t *T) {
		host, err := evidence.WatchOf(watchedDir)
		t.NilError(err)
		tok := t.tagged()
		var mu sync.Mutex
		var watches []evidence.Watch
		w := evidence.Sample(tok, 10*time.Millisecond, func(_ time.Time, procs []procfs.Proc) {
			for _, pr := range evidence.Programs(procs) {
				got := evidence.InotifyWatches(pr.PID)
				mu.Lock()
				watches = append(watches, got...)
				mu.Unlock()
			}
		})
		res := t.runPython(Preset(6), sandbox.Command{}, watchDir, tok, watchedDir, "0.5")
		w.Stop()
		out := strings.TrimSpace(res.Stdout)
		t.Assert(strings.HasPrefix(out, "inotify") || strings.HasPrefix(out, "watching"),
			"the program did not try inotify: stdout %q, stderr %s", res.Stdout, lastLine(res.Stderr))
		t.Check(!slices.Contains(watches, host), "the host saw the program's watch on its own %s (inode %d): %s", watchedDir, host.Ino, out)
		t.Check(!strings.HasPrefix(out, "watching"), "the program watches %s: %s", watchedDir, out)
		t.Evidence("the program: %s; the host saw %d inotify watches in it, none on its %s", out, len(watches), watchedDir)
	},
}
