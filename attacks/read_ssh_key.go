package attacks

import "strings"

func init() {
	register(attack{
		id:        "read_ssh_key",
		escapes:   "the fake SSH key's content appears in its output",
		firstStop: 5,
		args:      func(t *trial) []string { return []string{t.fx.sshKey} },
		judge:     judgeReadSSHKey,
	})
}

func judgeReadSSHKey(t *trial) verdict {
	if strings.Contains(t.output(), t.fx.keySecret) {
		return escaped("the output holds the key's content")
	}
	return t.programLayer(t.iso.homeCovered, "hidden by mount namespace", "the key is not in the output (%s)", lastLine(t.res.Stderr))
}
