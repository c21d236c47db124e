package attacks

func init() {
	register(attack{
		id:        "detached_daemon",
		escapes:   "a double-forked, setsid daemon is alive after the run",
		firstStop: 3,
		judge:     judgeDetachedDaemon,
	})
}

func judgeDetachedDaemon(t *trial) verdict {
	if len(t.aliveAfter) > 0 {
		return escaped("daemon pid %s alive after the run", pids(t.aliveAfter))
	}
	return t.layer(t.iso.ownPID, "PID namespace", "nothing alive after the run")
}
