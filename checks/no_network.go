package checks

import (
	"strings"

	"gotest.tools/v3/assert"

	"sandboxlab/sandbox"
)

var noNetwork = &Check{
	ID:      "no_network",
	Promise: "the program cannot connect out; a host honeypot on loopback receives nothing",
	Level:   4,
	Body: func(t *T) {
		hp := t.honeypot()
		res := t.runPython(preset(4), sandbox.Command{}, `
import socket, sys
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1)
    s.sendall(b"exfiltrated")
    s.close()
except OSError as e:
    print("errno", e.errno, file=sys.stderr)
`, hp.port())
		conns, got := hp.received()
		assert.Check(t, conns == 0 && len(got) == 0, "the honeypot received %d connections and %d bytes", conns, len(got))
		errno := strings.TrimSpace(strings.TrimPrefix(res.Stderr, "errno"))
		t.Evidence("the honeypot on loopback received nothing; connect failed with errno %s", errno)
	},
}
