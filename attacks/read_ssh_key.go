package attacks

import "strings"

var readSSHKeySpec = &spec{
	id:        "read_ssh_key",
	escapes:   "the fake SSH key's content appears in its output",
	firstStop: 5,
	new:       func() attack { return readSSHKey{} },
	elsewhere: elsewhere{harmlessAsRoot: true},
}

type readSSHKey struct{}

func (readSSHKey) args(e *env) []string { return []string{e.fx.sshKey} }

func (readSSHKey) judge(e *env) verdict {
	if strings.Contains(e.output(), e.fx.keySecret) {
		return escaped("the output holds the key's content")
	}
	return e.programLayer(e.iso.homeCovered, "hidden by mount namespace", "the key is not in the output (%s)", lastLine(e.res.Stderr))
}
