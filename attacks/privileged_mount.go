package attacks

import (
	"strings"
	"time"

	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
)

var privilegedMountSpec = &spec{
	id:        "privileged_mount",
	escapes:   "makes a private mount namespace and mounts a tmpfs in it",
	firstStop: 5,
	new:       func() attack { return &privilegedMount{} },
	elsewhere: elsewhere{harmlessAsRoot: true}, // its mounts are private to a namespace of its own
}

type privilegedMount struct {
	mount    *evidence.Mount // the attack's mount, once seen
	mountPID int             // the process that saw it
}

// The program mounts a tmpfs whose source is the cell's token: the host
// finds it in the mountinfo of the program's processes.
func (m *privilegedMount) watch(e *env, _ time.Time, procs []procfs.Proc) bool {
	for _, p := range procs {
		mounts, _ := evidence.Mountinfo(p.PID)
		if found, ok := evidence.FindMount(mounts, "tmpfs", e.token); ok {
			m.mount, m.mountPID = &found, p.PID
			return true
		}
	}
	return false
}

func (m *privilegedMount) judge(e *env) verdict {
	if m.mount != nil {
		point := m.mount.Point
		if point == "" {
			point = "?"
		}
		return escaped("pid %d has a tmpfs mounted on %s", m.mountPID, point)
	}
	why := strings.ReplaceAll(strings.TrimSpace(e.res.Stderr), "\n", "; ")
	noCaps := e.iso.capEff == 0 && e.iso.capBnd == 0
	if !noCaps && strings.Contains(e.res.Stderr, "errno 1 ") {
		// The host user lacks the privilege anyway.
		return e.programLayer(true, "host identity", "no mount seen; %s", why)
	}
	return e.programLayer(noCaps, "no capabilities", "no mount seen (the program's CapEff %#x, CapBnd %#x); %s", e.iso.capEff, e.iso.capBnd, why)
}
