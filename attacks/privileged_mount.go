package attacks

import (
	"strings"
	"time"

	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
)

func init() {
	register(attack{
		id:        "privileged_mount",
		escapes:   "makes a private mount namespace and mounts a tmpfs in it",
		firstStop: 5,
		watch:     watchPrivilegedMount,
		judge:     judgePrivilegedMount,
	})
}

// The program mounts a tmpfs whose source is the cell's token: the host
// finds it in the mountinfo of the program's processes.
func watchPrivilegedMount(t *trial, _ time.Time, procs []procfs.Proc) bool {
	for _, p := range procs {
		mounts, _ := evidence.Mountinfo(p.PID)
		if m, ok := evidence.FindMount(mounts, "tmpfs", t.token); ok {
			t.mount, t.mountPID = &m, p.PID
			return true
		}
	}
	return false
}

func judgePrivilegedMount(t *trial) verdict {
	if t.mount != nil {
		point := t.mount.Point
		if point == "" {
			point = "?"
		}
		return escaped("pid %d has a tmpfs mounted on %s", t.mountPID, point)
	}
	why := strings.ReplaceAll(strings.TrimSpace(t.res.Stderr), "\n", "; ")
	noCaps := t.iso.capEff == 0 && t.iso.capBnd == 0
	if !noCaps && strings.Contains(t.res.Stderr, "errno 1 ") {
		// The host user lacks the privilege anyway.
		return t.programLayer(true, "host identity", "no mount seen; %s", why)
	}
	return t.programLayer(noCaps, "no capabilities", "no mount seen (the program's CapEff %#x, CapBnd %#x); %s", t.iso.capEff, t.iso.capBnd, why)
}
