package checks

import (
	"slices"
	"strings"

	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

var egressAllowed = &Check{
	ID:      "egress_allowed",
	Suite:   verdict.Hardening,
	Promise: "an allowed destination is reached through the egress proxy, forwarded and tunnelled, at L6 too, and each request is logged with its rule and bytes",
	// The strongest level: the system-call filter and Landlock (which
	// denies TCP connect but to the proxy's port) must let the proxy
	// through. Nothing there could hide a refusal.
	Level:   6,
	Untimed: true,
	Body: func(t *T) {
		d := t.destination(0, false)
		dest := hostPort("allowed.test", d)
		p := egressPolicy(6, []string{dest}, nil, map[string]string{"allowed.test": d.IP()})
		res := t.runPython(p, sandbox.Command{}, egressPy+`
print("forwarded:", get("http://%s/forwarded" % sys.argv[1]))
print("tunnelled:", connect(sys.argv[1], "/tunnelled"))
`, dest)
		paths := d.Paths()
		t.Check(slices.Contains(paths, "/forwarded") && slices.Contains(paths, "/tunnelled"),
			"the destination at %s saw %v: %s", d, paths, programLines(res))
		t.Check(strings.Count(res.Stdout, "200 "+d.Token()) == 2, "the program did not get both answers: %s", programLines(res))
		t.Assert(len(res.Network) == 2, "the proxy's log: %v", res.Network)
		var sent, received int64
		for _, r := range res.Network {
			t.Check(r.Allowed && r.Rule == "allow "+dest && r.Destination() == dest && r.Status == 200, "logged: %s", r)
			t.Check(r.Sent > 0 && r.Received > 0, "no bytes counted: %s", r)
			sent, received = sent+r.Sent, received+r.Received
		}
		t.Check(res.Network[0].Method+" "+res.Network[1].Method == "GET CONNECT", "the proxy logged %s and %s, not GET and CONNECT", res.Network[0].Method, res.Network[1].Method)
		t.Evidence("at L6 (Landlock ABI %d) GET and CONNECT to %s reached %s, logged allowed by \"allow %s\", %d bytes sent and %d received",
			res.LandlockABI, dest, d, dest, sent, received)
	},
}
