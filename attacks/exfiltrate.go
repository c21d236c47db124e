package attacks

import (
	"strconv"
	"strings"
)

func init() {
	register(attack{
		id:        "exfiltrate",
		escapes:   "the loopback honeypot receives its bytes",
		firstStop: 4,
		needs:     needHoneypot,
		args: func(t *trial) []string {
			return []string{"127.0.0.1", strconv.Itoa(t.honeypot.Port())}
		},
		judge: judgeExfiltrate,
	})
}

func judgeExfiltrate(t *trial) verdict {
	conns, received, sample := t.honeypot.Received()
	if received > 0 {
		return escaped("the honeypot received %d bytes on %d connections: %q", received, conns, sample)
	}
	mechanism := "network namespace"
	if strings.Contains(t.res.Stderr, "errno 101") {
		mechanism += ": ENETUNREACH"
	}
	return t.layer(t.iso.ownNet, mechanism, "the honeypot received nothing (%d connections); %s", conns, lastLine(t.res.Stderr))
}
