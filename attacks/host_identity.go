package attacks

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/cgroup"
)

var hostIdentitySpec = &spec{
	id:        "host_identity",
	escapes:   "reads the host's name, boot id, kernel command line, uptime or boot time, sees a lock a host process holds, names its control group as the host does, or finds its session's path on the host",
	firstStop: 6,
	new:       func() attack { return &hostIdentity{} },
	elsewhere: elsewhere{harmlessAsRoot: true},
}

// hostIdentity's host holds a lock on a fixture of its own while the
// program runs, so that the machine's lock list has an entry that is
// the host's, named by the fixture's inode.
type hostIdentity struct {
	lock                      *os.File
	inode                     string // ":INODE ", as /proc/locks writes it
	hostname, bootID, cmdline string
	btime                     string
	uptime                    float64 // the host's, in s, before the run
}

func (h *hostIdentity) setup(e *env) error {
	var err error
	if h.lock, err = os.Create(filepath.Join(e.fx.root, "held.lock")); err != nil {
		return err
	}
	e.onCleanup(func() { h.lock.Close() })
	if err := unix.Flock(int(h.lock.Fd()), unix.LOCK_SH); err != nil {
		return err
	}
	st, err := h.lock.Stat()
	if err != nil {
		return err
	}
	h.inode = ":" + strconv.FormatUint(st.Sys().(*syscall.Stat_t).Ino, 10) + " "
	if h.hostname, err = os.Hostname(); err != nil {
		return err
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return err
	}
	cmdline, err := os.ReadFile("/proc/cmdline")
	if err != nil {
		return err
	}
	h.bootID, h.cmdline = strings.TrimSpace(string(boot)), strings.TrimSpace(string(cmdline))
	up, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return err
	}
	upS, _, _ := strings.Cut(string(up), " ")
	if h.uptime, err = strconv.ParseFloat(upS, 64); err != nil {
		return fmt.Errorf("reading the host's /proc/uptime %q: %w", up, err)
	}
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(stat), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			h.btime = v
		}
	}
	return nil
}

func (h *hostIdentity) judge(e *env) verdict {
	var got []string
	// The session's directory has a random name of the harness's making:
	// a line that holds it came from the host's view of the session.
	session := filepath.Base(e.session.Dir())
	sessionSeen := false
	for _, line := range strings.Split(e.res.Stdout, "\n") {
		key, value, _ := strings.Cut(line, "=")
		switch {
		case key == "nodename" && value == h.hostname:
			got = append(got, "the host name "+strconv.Quote(value))
		case key == "boot_id" && value == h.bootID:
			got = append(got, "the boot id "+value)
		case key == "btime" && value == h.btime:
			got = append(got, "the host's boot time "+value)
		case key == "uptime" && h.uptime >= 5 && atLeast(value, h.uptime-2):
			// Up for as long as the host was before the run: the host's
			// clock, not one that started with the run.
			got = append(got, "the host's uptime "+value+" s")
		case key == "cmdline" && h.cmdline != "" && value == h.cmdline:
			got = append(got, "the kernel's command line")
		case key == "lock" && strings.Contains(value+" ", h.inode):
			got = append(got, "the host's lock on inode "+strings.Trim(h.inode, ": "))
		case (key == "cwd" || key == "env" || key == "mount") && strings.Contains(value, session):
			if !sessionSeen {
				sessionSeen = true
				got = append(got, "its session's host path in its "+map[string]string{"cwd": "working directory", "env": "environment", "mount": "mount table"}[key]+": "+strconv.Quote(value))
			}
		case key == "cgroup" && strings.Contains(value, "/"+cgroup.RunPrefix):
			// The run's group by its host name, which holds the
			// harness's pid and start.
			got = append(got, "its control group's host path "+value)
		}
	}
	if len(got) > 0 {
		return escaped("the program read %s", strings.Join(got, ", "))
	}
	return e.programLayer(e.policy.Hardened.OwnIdentity, "own identity: its own host name, /proc's identity masked, its own clocks, the session at "+sandbox.SessionMount,
		"none of the host's identity in the output (%d lines)", strings.Count(e.res.Stdout, "\n"))
}

// atLeast reports whether value, a number of seconds, is at least min.
func atLeast(value string, min float64) bool {
	v, err := strconv.ParseFloat(value, 64)
	return err == nil && v >= min
}
