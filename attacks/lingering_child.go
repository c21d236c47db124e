package attacks

func init() {
	register(attack{
		id:        "lingering_child",
		escapes:   "a child in the run's own session is alive after the run",
		firstStop: 1,
		judge:     judgeLingeringChild,
	})
}

func judgeLingeringChild(t *trial) verdict {
	if len(t.aliveAfter) > 0 {
		return escaped("pid %s alive after the run", pids(t.aliveAfter))
	}
	if t.iso.ownPID {
		return t.layer(true, "PID namespace", "nothing alive after the run")
	}
	return t.layer(t.policy.Limits.Sweep, "sweep of the session", "nothing alive after the run")
}
