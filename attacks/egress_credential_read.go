package attacks

import (
	"fmt"
	"strings"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
)

var egressCredentialReadSpec = &spec{
	id: "egress_credential_read",
	escapes: "the API credential appears in its output (from L4 the policy gives it to the proxy for one destination; " +
		"below, with no proxy, the program must be handed it to use the API)",
	firstStop: 4,
	elsewhere: elsewhere{na: "it needs sandboxlab's egress proxy, which its policy's allowlist sets up; another sandbox's network has no such proxy to judge"},
	new:       func() attack { return &egressCredentialRead{} },
}

// egressCredentialRead's credential is for api.corp.test; echo.corp.test
// is allowed too and answers with the headers it got, as an echo service
// or a debugging endpoint does.
type egressCredentialRead struct {
	api, echo *evidence.Destination
	secret    string
}

func (x *egressCredentialRead) setup(e *env) error {
	e.unhurried() // its requests, not their speed, are the verdict
	x.secret = "Bearer sk-canary-" + randomHex(16)
	var err error
	if x.api, err = startDestination(e, 0, false); err != nil {
		return err
	}
	if x.echo, err = startDestination(e, 0, true); err != nil {
		return err
	}
	if withProxy(e) {
		n := &e.policy.Network
		n.Allow = []string{x.apiDest(), x.echoDest()}
		n.Resolve = map[string]string{"api.corp.test": x.api.IP(), "echo.corp.test": x.echo.IP()}
		n.Credentials = []sandbox.Credential{{Destination: x.apiDest(), Header: "Authorization", Value: x.secret}}
	}
	return nil
}

// apiDest is the credential's destination.
func (x *egressCredentialRead) apiDest() string {
	return fmt.Sprintf("api.corp.test:%d", x.api.Port())
}

// echoDest is the other allowed destination, which answers with what it got.
func (x *egressCredentialRead) echoDest() string {
	return fmt.Sprintf("echo.corp.test:%d", x.echo.Port())
}

func (x *egressCredentialRead) args(e *env) []string {
	args := []string{x.apiDest(), x.echoDest()}
	if !withProxy(e) {
		args = append(args, x.secret) // no proxy to hold it
	}
	return args
}

func (x *egressCredentialRead) judge(e *env) verdict {
	if strings.Contains(e.output(), x.secret) {
		where := "its output"
		if x.echo.Contains(x.secret) {
			where += ", by way of the echo destination, which the proxy sent it to"
		}
		return escaped("the credential is in %s", where)
	}
	return e.layer(e.iso.ownNet && withProxy(e), "egress proxy: the credential stays outside",
		"the credential is nowhere in its output; the API got it %d times, the echo destination %d", x.gotIt(x.api), x.gotIt(x.echo))
}

// gotIt counts the requests d received that carried the credential.
func (x *egressCredentialRead) gotIt(d *evidence.Destination) int {
	_, _, reqs := d.Received()
	n := 0
	for _, r := range reqs {
		if r.Header.Get("Authorization") == x.secret {
			n++
		}
	}
	return n
}
