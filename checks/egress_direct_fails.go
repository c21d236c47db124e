package checks

import (
	"fmt"
	"slices"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/verdict"
)

var egressDirectFails = &Check{
	ID:      "egress_direct_fails",
	Suite:   verdict.Hardening,
	Promise: "with an allowlist, a connection that bypasses the proxy fails: to the allowed host's own address, to a host service on loopback",
	// L4: the network namespace alone (Landlock, at L6, would refuse
	// these connects too, and so hide a namespace that let them out).
	Level:   4,
	Untimed: true,
	Body: func(t *T) {
		d := t.destination(0, false)
		hp, err := evidence.StartHoneypot()
		t.NilError(err)
		t.Cleanup(hp.Close)
		dest := hostPort("allowed.test", d)
		p := egressPolicy(4, []string{dest}, nil, map[string]string{"allowed.test": d.IP()})
		res := t.runPython(p, sandbox.Command{}, egressPy+`
print("proxy:", os.environ.get("HTTP_PROXY"))
print("through the proxy:", get("http://%s/proxied" % sys.argv[1]))
for name, host, port in (("the allowed host", sys.argv[2], sys.argv[3]), ("a host service", "127.0.0.1", sys.argv[4])):
    try:
        s = socket.create_connection((host, int(port)), timeout=2)
        s.sendall(b"GET /direct HTTP/1.0\r\n\r\n")
        s.close()
        print("direct to %s: connected" % name)
    except OSError as e:
        print("direct to %s: errno %d" % (name, e.errno))
`, dest, d.IP(), fmt.Sprint(d.Port()), fmt.Sprint(hp.Port()))
		out := programLines(res)
		conns, _, reqs := d.Received()
		t.Check(slices.Equal(seenPaths(reqs), []string{"/proxied"}) && conns == 1,
			"the allowed host %s saw %d connections (%v), want the one through the proxy: %s", d, conns, seenPaths(reqs), out)
		hpConns, hpBytes, _ := hp.Received()
		t.Check(hpConns == 0 && hpBytes == 0, "the host service on 127.0.0.1:%d received %d connections, %d bytes: %s", hp.Port(), hpConns, hpBytes, out)
		t.Evidence("only the proxied request reached %s; a host service on loopback received nothing: %s", d, out)
	},
}
