package attacks

import (
	"fmt"
	"strconv"

	"sandboxlab/sandbox/evidence"
)

var egressSmuggleSpec = &spec{
	id:        "egress_smuggle",
	escapes:   "a denied host (vault.corp.test, inside the allowed *.corp.test) receives a request smuggled behind an allowed one on a kept-alive connection",
	firstStop: 4,
	elsewhere: elsewhere{na: "it needs sandboxlab's egress proxy, which its policy's allowlist sets up; another sandbox's network has no such proxy to judge"},
	new:       func() attack { return &egressSmuggle{} },
}

// egressSmuggle's allowlist is *.corp.test with vault.corp.test denied:
// wiki is allowed, vault is the host it must not reach.
type egressSmuggle struct {
	wiki, vault *evidence.Destination
}

func (x *egressSmuggle) setup(e *env) error {
	e.unhurried() // its requests, not their speed, are the verdict
	var err error
	if x.wiki, err = startDestination(e, 0, false); err != nil {
		return err
	}
	if x.vault, err = startDestination(e, x.wiki.Port(), false); err != nil {
		return err
	}
	if withProxy(e) {
		port := x.wiki.Port()
		e.policy.Network.Allow = []string{fmt.Sprintf("*.corp.test:%d", port)}
		e.policy.Network.Deny = []string{fmt.Sprintf("vault.corp.test:%d", port)}
		e.policy.Network.Resolve = map[string]string{"wiki.corp.test": x.wiki.IP(), "vault.corp.test": x.vault.IP()}
	}
	return nil
}

func (x *egressSmuggle) args(*env) []string {
	return []string{strconv.Itoa(x.wiki.Port()), x.vault.IP()}
}

func (x *egressSmuggle) judge(e *env) verdict {
	conns, bytes, reqs := x.vault.Received()
	if bytes > 0 {
		return escaped("the denied host %s received %d bytes on %d connections (%d requests, paths %v)",
			x.vault, bytes, conns, len(reqs), paths(reqs))
	}
	return e.layer(e.iso.ownNet && withProxy(e), "egress proxy: each request decided",
		"the denied host received nothing (%d connections); %s", conns, refusals(e.res.Network))
}

// paths lists the paths a destination saw.
func paths(reqs []evidence.Seen) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.Path
	}
	return out
}
