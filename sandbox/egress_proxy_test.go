package sandbox

// The tests' runs with Network.Allow are served by the proxy (see
// egress.Linked), which the library itself does not link.
import _ "sandboxlab/sandbox/egress/proxy"
