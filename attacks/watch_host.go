package attacks

import (
	"slices"
	"strings"
	"time"

	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
)

var watchHostSpec = &spec{
	id:        "watch_host",
	escapes:   "holds an inotify watch on a system directory of the host's, and sees the host's processes open and execute files there",
	firstStop: 6,
	new:       func() attack { return &watchHost{} },
	elsewhere: elsewhere{harmlessAsRoot: true},
}

// watchHost is judged by the host's own inodes: the kernel lists each
// watch in the holder's fdinfo with the watched inode and device.
type watchHost struct {
	host []evidence.Watch // the host's /usr/bin, /usr/lib and /etc
	got  evidence.Watch   // the first watch of the program's on one of them
	pid  int
}

func (w *watchHost) setup(*env) error {
	for _, d := range []string{"/usr/bin", "/usr/lib", "/etc"} {
		if h, err := evidence.WatchOf(d); err == nil {
			w.host = append(w.host, h)
		}
	}
	return nil
}

func (w *watchHost) watch(_ *env, _ time.Time, procs []procfs.Proc) bool {
	for _, p := range procs {
		for _, got := range evidence.InotifyWatches(p.PID) {
			if slices.Contains(w.host, got) {
				w.got, w.pid = got, p.PID
				return true
			}
		}
	}
	return false
}

func (w *watchHost) judge(e *env) verdict {
	if w.pid != 0 {
		return escaped("pid %d watched the host's inode %d (device %#x): %s", w.pid, w.got.Ino, w.got.Dev, strings.TrimSpace(e.res.Stdout))
	}
	return e.programLayer(e.policy.Hardened.SyscallFilter, "system-call filter: inotify refused",
		"no watch on the host's system directories; the program: %s", strings.TrimSpace(e.res.Stdout))
}
