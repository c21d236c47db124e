package checks

import (
	"fmt"
	"slices"
	"strings"

	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

var egressDenyAddress = &Check{
	ID:      "egress_deny_address",
	Suite:   verdict.Hardening,
	Promise: "a deny rule on an address refuses every allowed name that resolves to it, forwarded or tunnelled, and the log names the rule",
	Level:   4,
	Untimed: true,
	Body: func(t *T) {
		wiki := t.destination(0, false)
		vault := t.destination(wiki.Port(), false)
		deny := fmt.Sprintf("%s:%d", vault.IP(), vault.Port())
		p := egressPolicy(4, []string{hostPort("*.corp.test", wiki)}, []string{deny},
			map[string]string{"wiki.corp.test": wiki.IP(), "mirror.corp.test": vault.IP()})
		res := t.runPython(p, sandbox.Command{}, egressPy+`
port = sys.argv[1]
print("allowed:", get("http://wiki.corp.test:%s/wiki" % port))
print("by another name:", get("http://mirror.corp.test:%s/mirror" % port))
print("tunnelled:", connect("mirror.corp.test:" + port, "/mirror-tunnel"))
`, fmt.Sprint(wiki.Port()))
		out := programLines(res)
		t.Check(slices.Contains(wiki.Paths(), "/wiki"), "the allowed host was not reached: %s", out)
		conns, bytes, reqs := vault.Received()
		t.Check(conns == 0, "the denied address %s received %d connections, %d bytes (%v): %s", vault, conns, bytes, seenPaths(reqs), out)
		rule := "deny " + deny + " (mirror.corp.test resolves to " + vault.IP() + ")"
		var byDeny []string
		for _, r := range res.Network {
			if !r.Allowed && r.Rule == rule {
				byDeny = append(byDeny, r.Method+" "+r.Destination())
			}
		}
		t.Check(len(byDeny) == 2, "refused by %q: %v; the log: %v", rule, byDeny, res.Network)
		t.Evidence("%s refused by %q although *.corp.test is allowed: %s; nothing reached %s",
			strings.Join(byDeny, ", "), rule, out, vault)
	},
}
