package attacks

import "strings"

func init() {
	register(attack{
		id:        "host_process_snoop",
		escapes:   "reads the secret in a host canary process's environment",
		firstStop: 3,
		needs:     needCanary,
		judge:     judgeHostProcessSnoop,
	})
}

func judgeHostProcessSnoop(t *trial) verdict {
	pid := t.canary.cmd.Process.Pid
	if strings.Contains(t.output(), t.canary.secret) {
		return escaped("the output holds the secret of canary pid %d", pid)
	}
	if !t.canary.alive() {
		return stopped("unexpected: the canary died", "canary pid %d is gone", pid)
	}
	seen := "canary pid %d alive, its secret not in the output"
	if !t.iso.ownPID && t.iso.ownUser {
		// The canary is in sight, but the kernel lets no process of
		// another user namespace read its environment.
		return t.layer(true, "user namespace", seen, pid)
	}
	return t.layer(t.iso.ownPID, "PID namespace: own /proc", seen, pid)
}
