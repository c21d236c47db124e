package checks

import (
	"strconv"
	"strings"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
)

var noNetwork = &Check{
	ID:      "no_network",
	Promise: "the program cannot connect out; a host honeypot on loopback receives nothing",
	Level:   4,
	Body: func(t *T) {
		hp, err := evidence.StartHoneypot()
		t.NilError(err)
		t.Cleanup(hp.Close)
		res := t.runPython(Preset(4), sandbox.Command{}, `
import socket, sys
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1)
    s.sendall(b"exfiltrated")
    s.close()
except OSError as e:
    print("errno", e.errno, file=sys.stderr)
`, strconv.Itoa(hp.Port()))
		conns, got, _ := hp.Received()
		t.Check(conns == 0 && got == 0, "the honeypot received %d connections and %d bytes", conns, got)
		errno := strings.TrimSpace(strings.TrimPrefix(res.Stderr, "errno"))
		t.Evidence("the honeypot on loopback received nothing; connect failed with errno %s", errno)
	},
}
