package checks

import (
	"slices"
	"strings"

	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

var egressDenyWins = &Check{
	ID:      "egress_deny_wins",
	Suite:   verdict.Hardening,
	Promise: "a deny rule beats an allow rule that also matches, however the name is written, and the log names the deny rule",
	Level:   4,
	Untimed: true,
	Body: func(t *T) {
		wiki := t.destination(0, false)
		vault := t.destination(wiki.Port(), false)
		deny := hostPort("vault.corp.test", vault)
		p := egressPolicy(4, []string{hostPort("*.corp.test", wiki)}, []string{deny},
			map[string]string{"wiki.corp.test": wiki.IP(), "vault.corp.test": vault.IP()})
		res := t.runPython(p, sandbox.Command{}, egressPy+`
port = sys.argv[1]
print("allowed:", get("http://wiki.corp.test:%s/wiki" % port))
print("denied:", get("http://vault.corp.test:%s/vault" % port))
print("denied, written otherwise:", get("http://VAULT.Corp.Test.:%s/vault-upper" % port))
print("denied tunnel:", connect("vault.corp.test:" + port, "/vault-tunnel"))
`, strings.TrimPrefix(deny, "vault.corp.test:"))
		out := programLines(res)
		t.Check(slices.Contains(wiki.Paths(), "/wiki"), "the allowed host was not reached: %s", out)
		conns, bytes, reqs := vault.Received()
		t.Check(conns == 0, "the denied host %s received %d connections, %d bytes (%v): %s", vault, conns, bytes, seenPaths(reqs), out)
		var byDeny []string
		for _, r := range res.Network {
			if !r.Allowed && r.Rule == "deny "+deny {
				byDeny = append(byDeny, r.Method+" "+r.Destination())
			}
		}
		t.Check(len(byDeny) == 3, "refused by \"deny %s\": %v; the log: %v", deny, byDeny, res.Network)
		t.Evidence("%s refused by \"deny %s\" although *.corp.test is allowed: %s; nothing reached %s",
			strings.Join(byDeny, ", "), deny, out, vault)
	},
}
