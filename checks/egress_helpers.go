package checks

import (
	"fmt"
	"strings"
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/egress"
	"sandboxlab/sandbox/evidence"
)

// What the egress checks share: their loopback destinations, their
// policies and the Python that makes requests through the proxy.

// destination starts a loopback destination for the check (see
// evidence.StartDestination), stopped after it.
func (t *T) destination(port int, echo bool) *evidence.Destination {
	t.Helper()
	d, err := evidence.StartDestination(port, echo)
	t.NilError(err)
	t.Cleanup(d.Close)
	return d
}

// egressPolicy is level n's policy with the network rules given, on the
// clock of what the check does not test (notTimed): a handful of requests
// must not meet the level's on a busy machine.
func egressPolicy(n int, allow, deny []string, names map[string]string) sandbox.Policy {
	return Preset(n, notTimed, func(p *sandbox.Policy) {
		p.Network.Allow, p.Network.Deny, p.Network.Resolve = allow, deny, names
	})
}

// hostPort joins a name and a destination's port.
func hostPort(name string, d *evidence.Destination) string {
	return fmt.Sprintf("%s:%d", name, d.Port())
}

// refusedIn returns the log's refused requests, as "METHOD host:port (rule)".
func refusedIn(log []egress.Request) []string {
	var out []string
	for _, r := range log {
		if !r.Allowed {
			out = append(out, fmt.Sprintf("%s %s (%s)", r.Method, r.Destination(), r.Rule))
		}
	}
	return out
}

// programLines is the program's output on one line, for evidence, after
// how the run ended when it printed nothing or did not end by itself.
func programLines(res *sandbox.Result) string {
	out := strings.ReplaceAll(strings.TrimSpace(res.Stdout+res.Stderr), "\n", "; ")
	if res.Reason == sandbox.ReasonExited && out != "" {
		return out
	}
	// A run that printed nothing, or did not end by itself, says how it
	// ended: a failure the clock or the machine caused reads as such.
	how := fmt.Sprintf("(the run ended %s after %v, status %d, the proxy logged %d requests", res.Reason, res.Wall.Round(time.Millisecond), res.ExitCode, len(res.Network))
	if res.Message != "" {
		how += ": " + res.Message
	}
	return strings.TrimSpace(how + ") " + out)
}

// egressPy is the Python the egress checks share, its output written line
// by line. get fetches a URL as urllib does by itself (through
// HTTP_PROXY); connect opens a CONNECT tunnel and sends one request
// inside it; keepalive sends requests one after another on one
// connection to the proxy, each after the answer to the one before. Each returns the status and the body's first line, or
// why it failed.
const egressPy = `
import os, socket, sys, urllib.error, urllib.parse, urllib.request

# Line by line, so that a run stopped at its clock still shows, in its
# evidence, how far the program got.
sys.stdout.reconfigure(line_buffering=True)

PROXY = urllib.parse.urlsplit(os.environ.get("HTTP_PROXY") or "http://127.0.0.1:3128")

def _proxy():
    return socket.create_connection((PROXY.hostname, PROXY.port), timeout=5)

def _head(f):
    status, length = f.readline().split(b" ", 2)[1].decode(), 0
    while True:
        line = f.readline()
        if line in (b"\r\n", b""):
            return status, length
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)

def get(url, headers=None):
    try:
        r = urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=5)
        return "%d %s" % (r.status, r.read().decode(errors="replace").strip().split("\n")[0])
    except urllib.error.HTTPError as e:
        return "%d" % e.code
    except Exception as e:
        return "failed: %s" % e

def connect(dest, path):
    try:
        s = _proxy()
        s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (dest, dest)).encode())
        f = s.makefile("rb")
        status, length = _head(f)
        if status != "200":
            return status
        s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (path, dest)).encode())
        status, length = _head(f)
        return "%s %s" % (status, f.read(length).decode(errors="replace").strip().split("\n")[0])
    except Exception as e:
        return "failed: %s" % e

def keepalive(*urls):
    out = []
    try:
        s = _proxy()
        f = s.makefile("rb")
        for url in urls:
            s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (url, urllib.parse.urlsplit(url).netloc)).encode())
            status, length = _head(f)
            f.read(length)
            out.append(status)
    except Exception as e:
        out.append("failed: %s" % e)
    return " ".join(out)
`
