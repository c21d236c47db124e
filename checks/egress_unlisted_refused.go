package checks

import (
	"fmt"
	"slices"
	"strings"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/egress"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/verdict"
)

var egressUnlistedRefused = &Check{
	ID:      "egress_unlisted_refused",
	Suite:   verdict.Hardening,
	Promise: "the egress proxy refuses and logs every destination its rules do not name: another name, a lookalike, the bare domain of a wildcard, another port, an IP address, a later request on a kept-alive connection",
	Level:   4,
	Untimed: true,
	Body: func(t *T) {
		// allowed is api.example.test and the subdomains of
		// cdn.example.test; other stands for everyone else, on the same
		// port; otherPort is allowed's own address on another port.
		allowed := t.destination(0, false)
		other := t.destination(allowed.Port(), false)
		otherPort, err := evidence.StartDestinationOn(allowed.Addr().Addr(), false)
		t.NilError(err)
		t.Cleanup(otherPort.Close)
		port := allowed.Port()
		names := map[string]string{"api.example.test": allowed.IP(), "img.cdn.example.test": allowed.IP()}
		for _, n := range []string{"other.test", "evilapi.example.test", "cdn.example.test", "api.example.test.evil.test"} {
			names[n] = other.IP()
		}
		p := egressPolicy(4, []string{hostPort("api.example.test", allowed), hostPort("*.cdn.example.test", allowed)}, nil, names)
		res := t.runPython(p, sandbox.Command{}, egressPy+`
port, other_port, addr = sys.argv[1], sys.argv[2], sys.argv[3]
u = lambda host, path, p=port: "http://%s:%s%s" % (host, p, path)
print("allowed:", get(u("api.example.test", "/allowed")))
print("wildcard:", get(u("img.cdn.example.test", "/wildcard")))
print("unlisted:", get(u("other.test", "/unlisted")))
print("lookalike:", get(u("evilapi.example.test", "/lookalike")))
print("lookalike tunnel:", connect("api.example.test.evil.test:" + port, "/lookalike-tunnel"))
print("bare domain:", connect("cdn.example.test:" + port, "/bare-domain"))
print("other port:", get(u("api.example.test", "/other-port", other_port)))
print("by address:", connect(addr + ":" + port, "/by-address"))
print("kept alive:", keepalive(u("api.example.test", "/first"), u("other.test", "/second")))
`, fmt.Sprint(port), fmt.Sprint(otherPort.Port()), allowed.IP())
		out := programLines(res)
		got := allowed.Paths()
		t.Check(slices.Contains(got, "/allowed") && slices.Contains(got, "/wildcard") && slices.Contains(got, "/first"),
			"the allowed requests did not all arrive (%v): %s", got, out)
		t.Check(!slices.Contains(got, "/by-address"), "a request for the address %s reached the allowed name's server: %s", allowed.IP(), out)
		for _, d := range []*evidence.Destination{other, otherPort} {
			conns, bytes, reqs := d.Received()
			t.Check(conns == 0, "%s received %d connections, %d bytes (%v): %s", d, conns, bytes, seenPaths(reqs), out)
		}
		refused := refusedIn(res.Network)
		for _, want := range []string{
			"GET other.test:", "GET evilapi.example.test:", "CONNECT api.example.test.evil.test:", "CONNECT cdn.example.test:",
			fmt.Sprintf("GET api.example.test:%d", otherPort.Port()), "CONNECT " + allowed.IP() + ":",
		} {
			t.Check(slices.ContainsFunc(refused, func(r string) bool { return strings.HasPrefix(r, want) }),
				"not logged as refused: %s (refused: %v)", want, refused)
		}
		t.Check(len(refused) == 7, "refused: %v", refused)
		var what []string
		for _, r := range refused {
			what = append(what, strings.TrimSuffix(r, " ("+egress.NoRule+")"))
		}
		t.Evidence("refused and logged (%s): %s; the allowed ones reached %s, nothing reached %s or %s",
			egress.NoRule, strings.Join(what, ", "), allowed, other, otherPort)
	},
}

// seenPaths lists the paths of requests a destination saw.
func seenPaths(reqs []evidence.Seen) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.Path
	}
	return out
}
