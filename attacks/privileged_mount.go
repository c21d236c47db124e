package attacks

import (
	"strings"
	"time"
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
func watchPrivilegedMount(t *trial, _ time.Duration) bool {
	for _, p := range t.attackProcs() {
		if line := mountedSource(p.PID, "tmpfs", t.token); line != "" {
			t.mount, t.mountPID = line, p.PID
			return true
		}
	}
	return false
}

func judgePrivilegedMount(t *trial) verdict {
	if t.mount != "" {
		f := strings.Fields(t.mount)
		point := "?"
		if len(f) > 4 {
			point = f[4]
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
