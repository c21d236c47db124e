package attacks

import (
	"fmt"
	"strconv"

	"sandboxlab/sandbox/evidence"
)

var egressLookalikeSpec = &spec{
	id:        "egress_lookalike",
	escapes:   "a server reached only by names that look like an allowed domain (evildocs.example.test, docs.example.test.evil.test) receives its bytes",
	firstStop: 4,
	elsewhere: elsewhere{na: "it needs sandboxlab's egress proxy, which its policy's allowlist sets up; another sandbox's network has no such proxy to judge"},
	new:       func() attack { return &egressLookalike{} },
}

// egressLookalike's allowlist is docs.example.test and its subdomains;
// the lookalikes resolve to the attacker's server, on the same port.
type egressLookalike struct {
	docs, attacker *evidence.Destination
}

// lookalikes are the names the program tries, each resolving to the
// attacker's server, as the attacker's DNS would have them.
var lookalikes = []string{"evildocs.example.test", "docs.example.test.evil.test", "docs-example.test", "xdocs.example.test"}

func (x *egressLookalike) setup(e *env) error {
	e.unhurried() // its requests, not their speed, are the verdict
	var err error
	if x.docs, err = startDestination(e, 0, false); err != nil {
		return err
	}
	if x.attacker, err = startDestination(e, x.docs.Port(), false); err != nil {
		return err
	}
	if withProxy(e) {
		port := x.docs.Port()
		e.policy.Network.Allow = []string{fmt.Sprintf("docs.example.test:%d", port), fmt.Sprintf("*.docs.example.test:%d", port)}
		e.policy.Network.Resolve = map[string]string{"docs.example.test": x.docs.IP(), "api.docs.example.test": x.docs.IP()}
		for _, n := range lookalikes {
			e.policy.Network.Resolve[n] = x.attacker.IP()
		}
	}
	return nil
}

func (x *egressLookalike) args(*env) []string {
	return []string{strconv.Itoa(x.docs.Port()), x.attacker.IP()}
}

func (x *egressLookalike) judge(e *env) verdict {
	conns, bytes, reqs := x.attacker.Received()
	if bytes > 0 {
		return escaped("the attacker's server %s received %d bytes on %d connections (%d requests, first Host %s)",
			x.attacker, bytes, conns, len(reqs), firstHost(reqs))
	}
	return e.layer(e.iso.ownNet && withProxy(e), "egress allowlist: names matched label by label",
		"the attacker's server received nothing (%d connections); %s", conns, refusals(e.res.Network))
}

// firstHost is the Host of the first request a destination saw.
func firstHost(reqs []evidence.Seen) string {
	if len(reqs) == 0 {
		return "none"
	}
	return strconv.Quote(reqs[0].Host)
}
