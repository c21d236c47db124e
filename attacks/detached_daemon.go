package attacks

var detachedDaemonSpec = &spec{
	id:          "detached_daemon",
	escapes:     "a double-forked, setsid daemon is alive after the run",
	firstStop:   3,
	new:         func() attack { return detachedDaemon{} },
	runsToLimit: true,
	elsewhere:   elsewhere{harmlessAsRoot: true},
}

type detachedDaemon struct{}

func (detachedDaemon) judge(e *env) verdict {
	if len(e.aliveAfter) > 0 {
		return escaped("daemon pid %s alive after the run", pids(e.aliveAfter))
	}
	return e.layer(e.iso.ownPID, "PID namespace", "nothing alive after the run")
}
