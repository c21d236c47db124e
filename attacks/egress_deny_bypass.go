package attacks

import (
	"fmt"
	"strconv"

	"sandboxlab/sandbox/evidence"
)

var egressDenyBypassSpec = &spec{
	id:        "egress_deny_bypass",
	escapes:   "a denied address receives a request made by an allowed name (in *.corp.test) that resolves to it",
	firstStop: 4,
	elsewhere: elsewhere{na: "it needs sandboxlab's egress proxy, which its policy's allowlist sets up; another sandbox's network has no such proxy to judge"},
	new:       func() attack { return &egressDenyBypass{} },
}

// egressDenyBypass's allowlist is *.corp.test with the vault's address
// denied; mirror.corp.test resolves to that address.
type egressDenyBypass struct {
	vault *evidence.Destination
}

func (x *egressDenyBypass) setup(e *env) error {
	e.unhurried() // its requests, not their speed, are the verdict
	var err error
	if x.vault, err = startDestination(e, 0, false); err != nil {
		return err
	}
	if withProxy(e) {
		port := x.vault.Port()
		e.policy.Network.Allow = []string{fmt.Sprintf("*.corp.test:%d", port)}
		e.policy.Network.Deny = []string{fmt.Sprintf("%s:%d", x.vault.IP(), port)}
		e.policy.Network.Resolve = map[string]string{"mirror.corp.test": x.vault.IP()}
	}
	return nil
}

func (x *egressDenyBypass) args(*env) []string {
	return []string{strconv.Itoa(x.vault.Port()), x.vault.IP()}
}

func (x *egressDenyBypass) judge(e *env) verdict {
	conns, bytes, reqs := x.vault.Received()
	if bytes > 0 {
		return escaped("the denied address %s received %d bytes on %d connections (paths %v)", x.vault, bytes, conns, paths(reqs))
	}
	return e.layer(e.iso.ownNet && withProxy(e), "egress proxy: a denied address holds for every name",
		"the denied address received nothing (%d connections); %s", conns, refusals(e.res.Network))
}
