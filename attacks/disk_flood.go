package attacks

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"time"

	"sandboxlab/sandbox/procfs"
)

var diskFloodSpec = &spec{
	id:          "disk_flood",
	escapes:     "its working directory holds more than the session's disk quota at once, within one run",
	firstStop:   6,
	new:         func() attack { return &diskFlood{} },
	runsToLimit: true,
	elsewhere:   elsewhere{harmlessAsRoot: true},
}

// diskFlood's evidence is the host's count of the blocks in the
// program's working directory (the application's at L0 and L1, the
// session's above), sampled while it runs: a check before the next run
// comes too late.
type diskFlood struct {
	peak int64
}

// setup pushes the wall clock back (unhurried): a loaded machine must
// not stop the program before its files are there, a stop no disk cap
// made.
func (d *diskFlood) setup(e *env) error {
	e.unhurried()
	return nil
}

func (d *diskFlood) watch(e *env, _ time.Time, _ []procfs.Proc) bool {
	d.peak = max(d.peak, blocksBelow(e.fx.appDir)+blocksBelow(e.session.Dir()))
	return false
}

func (d *diskFlood) judge(e *env) verdict {
	d.peak = max(d.peak, blocksBelow(e.fx.appDir)+blocksBelow(e.session.Dir()))
	if quota := e.session.Quota(); d.peak > quota {
		return escaped("its working directory held %s at once, over the session's quota of %s", mib(d.peak), mib(quota))
	}
	mechanism := "session filesystem: the kernel's disk cap"
	if e.res.Reason == "disk" {
		mechanism += " (disk full)"
	}
	return e.layer(e.policy.Hardened.SessionInodes > 0, mechanism, "at most %s at once; %s", mib(d.peak), lastLine(e.res.Stdout))
}

// blocksBelow adds up the bytes allocated below dir, links not followed.
func blocksBelow(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, de fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := de.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			}
		}
		return nil
	})
	return n
}
