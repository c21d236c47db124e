package attacks

import (
	"strconv"
	"strings"

	"sandboxlab/sandbox/evidence"
)

var exfiltrateSpec = &spec{
	id:        "exfiltrate",
	escapes:   "the loopback honeypot receives its bytes",
	firstStop: 4,
	new:       func() attack { return &exfiltrate{} },
	elsewhere: elsewhere{harmlessAsRoot: true},
}

type exfiltrate struct {
	honeypot *evidence.Honeypot
}

func (x *exfiltrate) setup(e *env) error {
	h, err := evidence.StartHoneypot()
	if err != nil {
		return err
	}
	x.honeypot = h
	e.onCleanup(h.Close)
	return nil
}

func (x *exfiltrate) args(*env) []string {
	return []string{"127.0.0.1", strconv.Itoa(x.honeypot.Port())}
}

func (x *exfiltrate) judge(e *env) verdict {
	// No process of the attack is left (see judge): whatever reached the
	// honeypot is in, and Received closes it.
	conns, received, sample := x.honeypot.Received()
	if received > 0 {
		return escaped("the honeypot received %d bytes on %d connections: %q", received, conns, sample)
	}
	mechanism := "network namespace"
	if strings.Contains(e.res.Stderr, "errno 101") {
		mechanism += ": ENETUNREACH"
	}
	return e.layer(e.iso.ownNet, mechanism, "the honeypot received nothing (%d connections); %s", conns, lastLine(e.res.Stderr))
}
