// Package egress is the proxy that a sandboxed program's network requests
// go through when its policy names the destinations it may reach: the
// only way out of a network namespace that has nothing but loopback.
//
// It runs on the host side of the wall, in the process that runs the
// sandbox, and serves whatever listener it is given (the sandbox hands it
// one made inside the program's own network namespace). It speaks HTTP
// CONNECT (the tunnel is not inspected, so HTTPS stays end to end) and
// plain-HTTP forward proxying, one decision per request: a keep-alive
// connection gets each of its requests judged on its own.
//
// A destination is host:port. Rules are patterns of the same form: an
// exact name, "*." and a name for its subdomains only (matched label by
// label, never as a string suffix: "*.example.com" admits
// "api.example.com", not "example.com" or "evilexample.com"), or an IP
// literal, which matches only that address; the port is a number or "*".
// A deny rule wins over an allow rule, and a deny rule on an address
// holds whatever name leads there: a name that resolves (through the map
// or DNS) to a denied address is refused, allowed or not. Allow rules
// stay one-way: an allowed address admits itself, never a name that
// resolves to it. The proxy resolves names itself,
// through the caller's map first (tests and local set-ups point names at
// loopback servers), then DNS, refusing DNS answers inside the host's own
// networks (loopback, private, link-local), which would make the host's
// services reachable through an allowed name.
//
// Every request is decided and logged (Request): when, which method and
// destination, allowed or denied and by which rule, bytes each way, the
// status the program got, and the name (never the value) of a credential
// the proxy added. A credential is a header for one exact destination,
// added to the program's plain-HTTP requests there and to no others; it
// lives in this process only, so the program never holds it. A tunnel
// cannot carry one: it is opened without it, and the log says so.
//
// This package is the proxy's policy: the rules, the configuration and
// its check (Compile), the log's Request, and the Server a run starts.
// The server itself is package proxy, which links net/http for it and
// registers itself when imported (Register, Linked): the sandbox's CLI
// does not import it, so that no start of the CLI or of a run pays for
// HTTP and TLS code a run without --allow never uses; it hands runs with
// --allow to sandboxlab-harness, which does. A binary that embeds the
// sandbox and allows egress imports package proxy, as a program imports
// an image decoder; without it such a run is refused (ErrNotLinked).
//
// Both packages import the standard library and the switch of the
// planted defects, consulted only at the planted sites.
package egress
