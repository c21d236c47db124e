// Package proxy is the egress proxy's server (see package egress for
// what it enforces and logs): HTTP CONNECT tunnels and plain-HTTP
// forwarding, one decision per request, the names resolved by the
// proxy itself. Importing it registers it with package egress, and a
// run whose policy allows egress is served by it.
package proxy
