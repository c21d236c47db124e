package attacks

import (
	"fmt"
	"slices"
	"strings"

	"sandboxlab/sandbox/egress"
	"sandboxlab/sandbox/evidence"
)

// What the egress attacks share: a loopback destination per cell, and a
// summary of what the proxy refused.

// startDestination starts a loopback destination for the cell (see
// evidence.StartDestination), stopped at its cleanup.
func startDestination(e *env, port int, echo bool) (*evidence.Destination, error) {
	d, err := evidence.StartDestination(port, echo)
	if err != nil {
		return nil, err
	}
	e.onCleanup(d.Close)
	return d, nil
}

// withProxy reports whether the cell's level gives the program the
// egress proxy: a network namespace of its own, where the allowlist is
// its only way out. Below L4 the program has the host's network, and
// the attack goes straight to its target's address.
func withProxy(e *env) bool { return e.policy.Network.Isolate }

// refusals sums up what the proxy refused in the run, for evidence: how
// many requests, and the hosts by rule.
func refusals(log []egress.Request) string {
	var rules []string
	hosts := map[string][]string{}
	n := 0
	for _, r := range log {
		if r.Allowed {
			continue
		}
		n++
		if _, seen := hosts[r.Rule]; !seen {
			rules = append(rules, r.Rule)
		}
		if !slices.Contains(hosts[r.Rule], r.Host) {
			hosts[r.Rule] = append(hosts[r.Rule], r.Host)
		}
	}
	if n == 0 {
		return "the proxy refused nothing"
	}
	parts := make([]string, len(rules))
	for i, rule := range rules {
		parts[i] = rule + ": " + strings.Join(hosts[rule], ", ")
	}
	return fmt.Sprintf("the proxy refused %d requests (%s)", n, strings.Join(parts, "; "))
}
