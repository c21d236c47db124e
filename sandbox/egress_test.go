package sandbox

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/sandbox/evidence"
)

// egressProbe fetches its first argument through the proxy (urllib reads
// HTTP_PROXY), then connects straight to the second (host:port) and
// prints what each gave, and the descriptors the program holds.
const egressProbe = `
import os, socket, sys, urllib.request
try:
    print("proxied:", urllib.request.urlopen(sys.argv[1], timeout=5).read().decode().strip())
except Exception as e:
    print("proxied failed:", e)
host, port = sys.argv[2].rsplit(":", 1)
try:
    socket.create_connection((host, int(port)), timeout=2).close()
    print("direct: connected")
except OSError as e:
    print("direct: errno", e.errno)
print("fds:", sorted(int(f) for f in os.listdir("/proc/self/fd")))
print("proxy env:", os.environ.get("HTTP_PROXY"), os.environ.get("https_proxy"))
`

// TestEgressThroughTheRelay: at L4 and at the strongest level this host
// has, the allowed destination is reached through the proxy (so Landlock
// and the filter let the proxy's port through at L6), a direct connect
// fails, the program holds no descriptor of the relay, and the request is
// in the Result's log.
func TestEgressThroughTheRelay(t *testing.T) {
	root := testRoot(t)
	d, err := evidence.StartDestination(0, false)
	assert.NilError(t, err)
	defer d.Close()
	dest := "allowed.test:" + strconv.Itoa(d.Port())
	levels := levelsHere(t, 4)
	for _, n := range []int{4, levels[len(levels)-1]} {
		p := MustPreset(n)
		p.Network.Allow = []string{dest}
		p.Network.Resolve = map[string]string{"allowed.test": d.IP()}
		res := runPy(t, root, p, Command{}, egressProbe, "http://"+dest+"/L"+strconv.Itoa(n), d.String())
		assert.Check(t, is.Contains(res.Stdout, "proxied: "+d.Token()), "L%d: %s%s", n, res.Stdout, res.Stderr)
		assert.Check(t, is.Contains(res.Stdout, "direct: errno"), "L%d", n)
		assert.Check(t, is.Contains(res.Stdout, "fds: [0, 1, 2, 3]"), "L%d: the program holds more than its stdio", n)
		assert.Check(t, is.Contains(res.Stdout, "proxy env: http://"+EgressProxy+" http://"+EgressProxy), "L%d", n)
		assert.Assert(t, is.Len(res.Network, 1), "L%d", n)
		r := res.Network[0]
		assert.Check(t, r.Allowed && r.Method == "GET" && r.Destination() == dest && r.Status == 200, "L%d: %+v", n, r)
		t.Logf("L%d: %s; %s", n, r, strings.TrimSpace(res.Stdout))
	}
	conns, _, _ := d.Received()
	assert.Check(t, is.Equal(conns, 2), "only the two proxied requests reached the destination")
}

// TestEgressOffKeepsNoNetwork: without an allowlist, L4 is as before: no
// interface up, connect fails with ENETUNREACH, and there is no log.
func TestEgressOffKeepsNoNetwork(t *testing.T) {
	res := runPy(t, testRoot(t), MustPreset(4), Command{}, `
import socket
try:
    socket.create_connection(("127.0.0.1", 3128), timeout=1)
except OSError as e:
    print(e.errno)
`)
	assert.Check(t, is.Equal(strings.TrimSpace(res.Stdout), "101"))
	assert.Check(t, res.Network == nil)
}

// TestEgressRefusesBadPolicies: an allowlist without a network namespace,
// or a credential with the caller's environment, is refused before
// anything runs.
func TestEgressRefusesBadPolicies(t *testing.T) {
	p := MustPreset(3)
	p.Network.Allow = []string{"a.test:80"}
	assert.Check(t, is.ErrorContains(p.Validate(), "needs the network namespace"))
	p = MustPreset(4)
	p.Workspace.ScrubEnv = false
	p.Network.Allow = []string{"a.test:80"}
	p.Network.Credentials = []Credential{{Destination: "a.test:80", Header: "X-Key", Value: "v"}}
	assert.Check(t, is.ErrorContains(p.Validate(), "scrubbed environment"))
	p = MustPreset(4)
	p.Network.Allow = []string{"*.com:443"}
	assert.Check(t, is.ErrorContains(p.Validate(), "top-level domain"))
	assert.Check(t, is.ErrorIs(p.Validate(), ErrInvalidPolicy))
}

// TestEgressLeavesNothing: the relay's sockets (the pair, the listener
// in the program's namespace, the connections) are all closed when the
// run returns, whether the program used the proxy or not.
func TestEgressLeavesNothing(t *testing.T) {
	root := testRoot(t)
	p := MustPreset(4)
	p.Network.Allow = []string{"a.test:80"}
	p.Network.Resolve = map[string]string{"a.test": "127.0.0.1"}
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		assert.NilError(t, err)
		return len(ents)
	}
	runPy(t, root, p, Command{}, "pass") // the runtime's own descriptors, made once
	before := fds()
	for _, src := range []string{"pass", egressProbe} {
		runPy(t, root, p, Command{}, src, "http://b.test/", "127.0.0.1:9")
	}
	assert.Check(t, is.Equal(fds(), before))
}
