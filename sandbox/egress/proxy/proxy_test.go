package proxy

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/sandbox/egress"
	"sandboxlab/sandbox/evidence"
)

// destination starts a loopback destination, stopped after the test.
func destination(t testing.TB, port int, echo bool) *evidence.Destination {
	t.Helper()
	d, err := evidence.StartDestination(port, echo)
	assert.NilError(t, err)
	t.Cleanup(d.Close)
	return d
}

// startProxy serves a proxy for cfg on a loopback port of the host and
// returns it with its address; it is closed after the test.
func startProxy(t testing.TB, cfg egress.Config) (*Proxy, string) {
	t.Helper()
	p, err := New(cfg)
	assert.NilError(t, err)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	assert.NilError(t, err)
	served := make(chan error, 1)
	go func() { served <- p.Serve(ln) }()
	t.Cleanup(func() {
		p.Close()
		assert.Check(t, <-served)
	})
	return p, ln.Addr().String()
}

// get fetches rawURL through the proxy at proxy, as a program with
// HTTP_PROXY set does, and returns the status and body.
func get(t *testing.T, proxy, rawURL string, header http.Header) (int, string) {
	t.Helper()
	pu, _ := url.Parse("http://" + proxy)
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true}, Timeout: 10 * time.Second}
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	assert.NilError(t, err)
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := c.Do(req)
	assert.NilError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	assert.NilError(t, err)
	return resp.StatusCode, string(b)
}

// connect opens a tunnel to dest through the proxy and returns the
// connection and the proxy's status.
func connect(t *testing.T, proxy, dest string) (net.Conn, *bufio.Reader, int) {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	assert.NilError(t, err)
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", dest, dest)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	assert.NilError(t, err)
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body)
	}
	return c, br, resp.StatusCode
}

// TestForwardAndTunnel: an allowed destination is reached both ways, and
// each request is logged with its rule and its bytes.
func TestForwardAndTunnel(t *testing.T) {
	d := destination(t, 0, false)
	name := "allowed.test"
	dest := fmt.Sprintf("%s:%d", name, d.Port())
	p, addr := startProxy(t, egress.Config{Allow: []string{dest}, Resolve: map[string]string{name: d.IP()}})

	status, body := get(t, addr, "http://"+dest+"/forwarded", nil)
	assert.Check(t, is.Equal(status, 200))
	assert.Check(t, is.Equal(strings.TrimSpace(body), d.Token()))

	c, br, status := connect(t, addr, dest)
	assert.Assert(t, is.Equal(status, 200))
	fmt.Fprintf(c, "GET /tunnelled HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", dest)
	resp, err := http.ReadResponse(br, nil)
	assert.NilError(t, err)
	b, _ := io.ReadAll(resp.Body)
	assert.Check(t, is.Equal(strings.TrimSpace(string(b)), d.Token()))
	c.Close()

	p.Close()
	assert.Check(t, is.DeepEqual(d.Paths(), []string{"/forwarded", "/tunnelled"}))
	log := p.Requests()
	assert.Assert(t, is.Len(log, 2))
	for i, method := range []string{"GET", "CONNECT"} {
		r := log[i]
		assert.Check(t, is.Equal(r.Method, method))
		assert.Check(t, is.Equal(r.Destination(), dest))
		assert.Check(t, r.Allowed)
		assert.Check(t, is.Equal(r.Rule, "allow "+dest))
		assert.Check(t, is.Equal(r.Status, 200))
		assert.Check(t, r.Sent > 0 && r.Received > 0, "%+v", r)
	}
}

// TestRefusals: what no rule admits is refused with 403 and a reason,
// logged, and never reaches its destination; a deny rule wins.
func TestRefusals(t *testing.T) {
	allowed := destination(t, 0, false)
	other := destination(t, allowed.Port(), false) // same port, another address
	port := allowed.Port()
	p, addr := startProxy(t, egress.Config{
		Allow: []string{fmt.Sprintf("*.docs.test:%d", port), fmt.Sprintf("%s:%d", "127.0.0.1", port)},
		Deny:  []string{fmt.Sprintf("vault.docs.test:%d", port)},
		Resolve: map[string]string{
			"api.docs.test": allowed.IP(), "docs.test": other.IP(), "evildocs.test": other.IP(),
			"vault.docs.test": other.IP(), "other.test": other.IP(),
		},
	})
	refused := []string{"other.test", "evildocs.test", "docs.test", "vault.docs.test", allowed.IP()}
	for _, host := range refused {
		status, body := get(t, addr, fmt.Sprintf("http://%s:%d/x", host, port), nil)
		assert.Check(t, is.Equal(status, 403), host)
		assert.Check(t, is.Contains(body, "refused"), host)
		_, _, status = connect(t, addr, fmt.Sprintf("%s:%d", host, port))
		assert.Check(t, is.Equal(status, 403), host)
	}
	status, _ := get(t, addr, fmt.Sprintf("http://api.docs.test:%d/ok", port), nil)
	assert.Check(t, is.Equal(status, 200))
	status, _ = get(t, addr, fmt.Sprintf("http://api.docs.test:%d/x", port+1), nil)
	assert.Check(t, is.Equal(status, 403), "another port")

	p.Close()
	assert.Check(t, is.DeepEqual(allowed.Paths(), []string{"/ok"}))
	conns, _, _ := other.Received()
	assert.Check(t, is.Equal(conns, 0))
	log := p.Requests()
	assert.Check(t, is.Len(log, 2*len(refused)+2))
	rules := map[string]string{}
	for _, r := range log {
		if !r.Allowed {
			rules[r.Host] = r.Rule
			assert.Check(t, is.Equal(r.Sent+r.Received, int64(0)), "%+v", r)
		}
	}
	assert.Check(t, is.Equal(rules["vault.docs.test"], fmt.Sprintf("deny vault.docs.test:%d", port)))
	assert.Check(t, is.Equal(rules["evildocs.test"], egress.NoRule))
}

// TestKeepAlive: each request of a keep-alive connection is decided on
// its own: an allowed one first does not let a refused one through.
func TestKeepAlive(t *testing.T) {
	allowed := destination(t, 0, false)
	other := destination(t, 0, false)
	a, o := fmt.Sprintf("a.test:%d", allowed.Port()), fmt.Sprintf("o.test:%d", other.Port())
	p, addr := startProxy(t, egress.Config{Allow: []string{a}, Resolve: map[string]string{"a.test": allowed.IP(), "o.test": other.IP()}})
	c, err := net.Dial("tcp", addr)
	assert.NilError(t, err)
	defer c.Close()
	// Both at once, as a pipelining client sends them.
	fmt.Fprintf(c, "GET http://%s/first HTTP/1.1\r\nHost: %s\r\n\r\nGET http://%s/second HTTP/1.1\r\nHost: %s\r\n\r\n", a, a, o, o)
	br := bufio.NewReader(c)
	r1, err := http.ReadResponse(br, nil)
	assert.NilError(t, err)
	io.Copy(io.Discard, r1.Body)
	assert.Check(t, is.Equal(r1.StatusCode, 200))
	r2, err := http.ReadResponse(br, nil)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(r2.StatusCode, 403))
	p.Close()
	conns, _, _ := other.Received()
	assert.Check(t, is.Equal(conns, 0))
	assert.Check(t, is.DeepEqual(allowed.Paths(), []string{"/first"}))
}

// TestCredential: the header goes to its destination only, replacing the
// program's own, and neither the log nor the JSON of the config holds
// its value.
func TestCredential(t *testing.T) {
	api := destination(t, 0, true)
	echo := destination(t, 0, true)
	secret := "Bearer sk-test-5f3a9c"
	ad, ed := fmt.Sprintf("api.test:%d", api.Port()), fmt.Sprintf("echo.test:%d", echo.Port())
	cred := egress.Credential{Destination: ad, Header: "Authorization", Value: secret}
	p, addr := startProxy(t, egress.Config{
		Allow:       []string{ad, ed},
		Credentials: []egress.Credential{cred},
		Resolve:     map[string]string{"api.test": api.IP(), "echo.test": echo.IP()},
	})
	_, body := get(t, addr, "http://"+ad+"/", http.Header{"Authorization": {"Bearer forged"}})
	assert.Check(t, is.Contains(body, "Authorization: "+secret))
	assert.Check(t, !strings.Contains(body, "forged"))
	_, body = get(t, addr, "http://"+ed+"/", nil)
	assert.Check(t, !strings.Contains(body, secret), body)
	_, _, status := connect(t, addr, ad)
	assert.Check(t, is.Equal(status, 200))
	p.Close()

	assert.Check(t, !echo.Contains("sk-test"))
	log := p.Requests()
	assert.Assert(t, is.Len(log, 3))
	assert.Check(t, is.Equal(log[0].Credential, "Authorization"))
	assert.Check(t, is.Equal(log[1].Credential, ""))
	assert.Check(t, is.Contains(log[2].Note, "tunnelled without"))
	b, err := json.Marshal(log)
	assert.NilError(t, err)
	assert.Check(t, !strings.Contains(string(b), "sk-test"))
	b, err = json.Marshal(egress.Config{Credentials: []egress.Credential{cred}})
	assert.NilError(t, err)
	assert.Check(t, !strings.Contains(string(b), "sk-test"))
	assert.Check(t, !strings.Contains(fmt.Sprintf("%v %+v %#v", cred, cred, cred), "sk-test"))
}

// TestBadConfig: credentials that could never be sent, or that would
// reframe the request, are refused.
func TestBadConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg egress.Config
		why string
	}{
		{egress.Config{Allow: []string{"a.test:80"}, Credentials: []egress.Credential{{Destination: "b.test:80", Header: "X-Key", Value: "v"}}}, "would never be sent"},
		{egress.Config{Allow: []string{"*.a.test:80"}, Deny: []string{"x.a.test:80"}, Credentials: []egress.Credential{{Destination: "x.a.test:80", Header: "X-Key", Value: "v"}}}, "deny x.a.test:80"},
		{egress.Config{Allow: []string{"*.a.test:80"}, Credentials: []egress.Credential{{Destination: "*.a.test:80", Header: "X-Key", Value: "v"}}}, "no wildcard"},
		{egress.Config{Allow: []string{"a.test:80"}, Credentials: []egress.Credential{{Destination: "a.test:80", Header: "Host", Value: "v"}}}, "frames"},
		{egress.Config{Allow: []string{"a.test:80"}, Credentials: []egress.Credential{{Destination: "a.test:80", Header: "X Key", Value: "v"}}}, "character"},
		{egress.Config{Allow: []string{"a.test:80"}, Credentials: []egress.Credential{{Destination: "a.test:80", Header: "X-Key", Value: "v\r\nX-Other: 1"}}}, "line break"},
		{egress.Config{Allow: []string{"a.test:80"}, Resolve: map[string]string{"a.test": "localhost"}}, "not an IP address"},
		{egress.Config{Allow: []string{"a.test:80"}, Resolve: map[string]string{"127.0.0.1": "127.0.0.2"}}, "not a name"},
		{egress.Config{Allow: []string{"a.test"}}, "want host:port"},
	} {
		err := egress.CheckConfig(tc.cfg)
		assert.Check(t, is.ErrorContains(err, tc.why))
		if err != nil {
			assert.Check(t, !strings.Contains(err.Error(), "v\r\n"), "the error holds no value")
		}
	}
}

// TestMalformed: what is not a proxy request is refused and logged.
func TestMalformed(t *testing.T) {
	p, addr := startProxy(t, egress.Config{Allow: []string{"a.test:80"}})
	for _, raw := range []string{
		"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n",                   // origin-form: not for a proxy
		"GET https://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n",     // TLS is the program's, through CONNECT
		"CONNECT a.test HTTP/1.1\r\nHost: a.test\r\n\r\n",          // no port
		"GET http://a.test%00.b/ HTTP/1.1\r\nHost: a.test\r\n\r\n", // not a name
		"NONSENSE\r\n\r\n",
		"GET http://a.test/ HTTP/1.1\r\nX: " + strings.Repeat("a", maxHeaderBytes) + "\r\n\r\n",
	} {
		c, err := net.Dial("tcp", addr)
		assert.NilError(t, err)
		io.WriteString(c, raw)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		assert.NilError(t, err, "%.40q", raw)
		assert.Check(t, resp.StatusCode == 400 || resp.StatusCode == 431, "%.40q: %d", raw, resp.StatusCode)
		c.Close()
	}
	p.Close()
	log := p.Requests()
	assert.Check(t, is.Len(log, 6))
	for _, r := range log {
		assert.Check(t, !r.Allowed)
		assert.Check(t, r.Rule != "", "%+v", r)
	}
}

// TestCloseEndsTunnels: Close ends an open tunnel and logs it.
func TestCloseEndsTunnels(t *testing.T) {
	d := destination(t, 0, false)
	dest := fmt.Sprintf("t.test:%d", d.Port())
	p, addr := startProxy(t, egress.Config{Allow: []string{dest}, Resolve: map[string]string{"t.test": d.IP()}})
	c, br, status := connect(t, addr, dest)
	assert.Assert(t, is.Equal(status, 200))
	// A keep-alive request: the destination keeps the connection, so
	// the tunnel stays open once the answer is in.
	io.WriteString(c, "GET /open HTTP/1.1\r\nHost: t.test\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	assert.NilError(t, err)
	io.Copy(io.Discard, resp.Body)
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the open tunnel")
	}
	log := p.Requests()
	assert.Assert(t, is.Len(log, 1))
	assert.Check(t, log[0].Sent > 0 && log[0].Received > 0, "%+v", log[0])
}

// TestInternalAddresses: what DNS may not point an allowed name at.
func TestInternalAddresses(t *testing.T) {
	for _, s := range []string{"127.0.0.1", "10.1.2.3", "192.168.0.1", "172.16.0.1", "169.254.1.1", "::1", "fe80::1", "fc00::1", "0.0.0.0", "224.0.0.1"} {
		a, err := egress.ParseTarget(s, 1)
		assert.NilError(t, err)
		assert.Check(t, internal(a.Addr), s)
	}
	for _, s := range []string{"93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"} {
		a, err := egress.ParseTarget(s, 1)
		assert.NilError(t, err)
		assert.Check(t, !internal(a.Addr), s)
	}
}

// TestConnectionCap: past maxConns connections at once, a new one is
// closed and logged, and the ones served go on.
func TestConnectionCap(t *testing.T) {
	p, addr := startProxy(t, egress.Config{Allow: []string{"a.test:80"}})
	var held []net.Conn
	for range maxConns {
		c, err := net.Dial("tcp", addr)
		assert.NilError(t, err)
		held = append(held, c)
	}
	poll := func() int {
		for range 500 {
			p.mu.Lock()
			n := p.active
			p.mu.Unlock()
			if n == maxConns {
				return n
			}
			time.Sleep(10 * time.Millisecond)
		}
		return -1
	}
	assert.Assert(t, is.Equal(poll(), maxConns))
	extra, err := net.Dial("tcp", addr)
	assert.NilError(t, err)
	extra.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = extra.Read(make([]byte, 1))
	assert.Check(t, err == io.EOF || errors.Is(err, syscall.ECONNRESET), "the connection past the cap was not closed: %v", err)
	for _, c := range held {
		c.Close()
	}
	p.Close()
	log := p.Requests()
	assert.Assert(t, is.Len(log, 1))
	assert.Check(t, is.Contains(log[0].Rule, "connections at once"))
}

// TestDenyByAddress: a deny rule on an address refuses every name that
// resolves to it, however it is allowed (a wildcard, an exact name) and
// however it is asked for (forwarded, tunnelled), and the log names the
// rule, the name and the address; allow rules keep matching an address
// only by itself.
func TestDenyByAddress(t *testing.T) {
	vault := destination(t, 0, false)
	wiki := destination(t, vault.Port(), false)
	port := vault.Port()
	deny := fmt.Sprintf("%s:%d", vault.IP(), port)
	p, addr := startProxy(t, egress.Config{
		Allow: []string{fmt.Sprintf("*.corp.test:%d", port), fmt.Sprintf("mirror.example.test:%d", port), fmt.Sprintf("%s:*", wiki.IP())},
		Deny:  []string{deny},
		Resolve: map[string]string{"wiki.corp.test": wiki.IP(), "vault-alias.corp.test": vault.IP(),
			"mirror.example.test": vault.IP(), "wiki-by-name.example.test": wiki.IP()},
	})
	status, _ := get(t, addr, fmt.Sprintf("http://wiki.corp.test:%d/wiki", port), nil)
	assert.Check(t, is.Equal(status, 200), "a name resolving to an undenied address is reached")
	status, body := get(t, addr, fmt.Sprintf("http://vault-alias.corp.test:%d/alias", port), nil)
	assert.Check(t, is.Equal(status, 403), body)
	assert.Check(t, is.Contains(body, "vault-alias.corp.test resolves to "+vault.IP()))
	status, _ = get(t, addr, fmt.Sprintf("http://mirror.example.test:%d/mirror", port), nil)
	assert.Check(t, is.Equal(status, 403), "an exact allowed name is refused too")
	_, _, status = connect(t, addr, fmt.Sprintf("vault-alias.corp.test:%d", port))
	assert.Check(t, is.Equal(status, 403), "a tunnel is refused too")
	status, _ = get(t, addr, fmt.Sprintf("http://wiki-by-name.example.test:%d/by-name", port), nil)
	assert.Check(t, is.Equal(status, 403), "an allowed address does not admit a name resolving to it")

	p.Close()
	conns, _, _ := vault.Received()
	assert.Check(t, is.Equal(conns, 0), "the denied address received a connection")
	assert.Check(t, is.DeepEqual(wiki.Paths(), []string{"/wiki"}))
	var rules []string
	for _, r := range p.Requests() {
		if !r.Allowed {
			rules = append(rules, r.Rule)
		}
	}
	want := "deny " + deny + " (%s resolves to " + vault.IP() + ")"
	assert.Check(t, is.DeepEqual(rules, []string{fmt.Sprintf(want, "vault-alias.corp.test"), fmt.Sprintf(want, "mirror.example.test"),
		fmt.Sprintf(want, "vault-alias.corp.test"), egress.NoRule}))
}

// TestRegistered: importing this package gives package egress its server.
func TestRegistered(t *testing.T) {
	assert.Assert(t, egress.Linked())
	s, err := egress.NewServer(egress.Config{Allow: []string{"a.test:80"}})
	assert.NilError(t, err)
	_, ok := s.(*Proxy)
	assert.Check(t, ok, "the server is a %T", s)
	assert.NilError(t, s.Close())
}
