package attacks

var lingeringChildSpec = &spec{
	id:          "lingering_child",
	escapes:     "a child in the run's own session is alive after the run",
	firstStop:   1,
	new:         func() attack { return lingeringChild{} },
	runsToLimit: true,
	elsewhere:   elsewhere{harmlessAsRoot: true},
}

type lingeringChild struct{}

func (lingeringChild) judge(e *env) verdict {
	if len(e.aliveAfter) > 0 {
		return escaped("pid %s alive after the run", pids(e.aliveAfter))
	}
	if e.iso.ownPID {
		return e.layer(true, "PID namespace", "nothing alive after the run")
	}
	return e.layer(e.policy.Limits.Sweep, "sweep of the session", "nothing alive after the run")
}
