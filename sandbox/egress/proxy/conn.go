package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"sandboxlab/sandbox/egress"
)

// hopHeaders are the headers of one connection, never passed on
// (RFC 9110 §7.6.1), with Proxy-Authorization, which is the proxy's.
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// errHeaderTooLarge is the read error past maxHeaderBytes.
var errHeaderTooLarge = errors.New("request line and headers over the limit")

// headerLimit bounds the bytes read while the proxy reads a request's
// head; n < 0 is no bound (the body streams through, never held).
type headerLimit struct {
	r io.Reader
	n int64
}

func (l *headerLimit) Read(b []byte) (int, error) {
	if l.n == 0 {
		return 0, errHeaderTooLarge
	}
	if l.n > 0 && int64(len(b)) > l.n {
		b = b[:l.n]
	}
	n, err := l.r.Read(b)
	if l.n > 0 {
		l.n -= int64(n)
	}
	return n, err
}

// countWriter counts what goes through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// serveConn serves one client connection: requests one after another
// until it closes, one fails, or a CONNECT turns it into a tunnel.
func (p *Proxy) serveConn(c net.Conn) {
	lim := &headerLimit{r: c}
	br := bufio.NewReader(lim)
	var first *egress.Decision // the connection's first decision (see decide)
	for {
		lim.n = maxHeaderBytes
		req, err := http.ReadRequest(br)
		if err != nil {
			if !errors.Is(err, io.EOF) && !p.isClosed() && !errors.Is(err, net.ErrClosed) {
				p.malformed(c, err)
			}
			return
		}
		lim.n = -1
		if req.Method == http.MethodConnect {
			p.tunnel(c, br, req, &first)
			return
		}
		if !p.forward(c, req, &first) {
			return
		}
	}
}

// malformed answers and logs a request that could not be read.
func (p *Proxy) malformed(c net.Conn, err error) {
	status, why := http.StatusBadRequest, "malformed request"
	if errors.Is(err, errHeaderTooLarge) {
		status, why = http.StatusRequestHeaderFieldsTooLarge, fmt.Sprintf("request head over %d bytes", maxHeaderBytes)
	}
	reply(c, status, why)
	p.record(egress.Request{Time: time.Now(), Rule: why, Status: status})
}

// target returns the destination of req: a CONNECT's authority, or a
// forwarded request's absolute http URL (port 80 by default).
func target(req *http.Request) (egress.Target, string, error) {
	raw := req.URL.Host
	if req.Method == http.MethodConnect {
		host, portText, err := net.SplitHostPort(raw)
		if err != nil || req.URL.Path != "" {
			return egress.Target{}, raw, fmt.Errorf("CONNECT wants host:port, got %q", req.RequestURI)
		}
		port, err := strconv.Atoi(portText)
		if err != nil {
			return egress.Target{}, raw, fmt.Errorf("port %q", portText)
		}
		t, err := egress.ParseTarget(host, port)
		return t, raw, err
	}
	switch {
	case req.URL.Scheme == "https":
		return egress.Target{}, raw, errors.New("an https:// URL is sent as CONNECT (the proxy does not open TLS for the program)")
	case req.URL.Scheme != "http" || raw == "":
		return egress.Target{}, raw, errors.New("not a proxy request: want an absolute http:// URL or CONNECT (is HTTP_PROXY set?)")
	}
	port, err := portOf(req.URL.Port(), 80)
	if err != nil {
		return egress.Target{}, raw, fmt.Errorf("port %q", req.URL.Port())
	}
	t, err := egress.ParseTarget(req.URL.Hostname(), port)
	return t, raw, err
}

// begin reads req's destination and decides it, returning the log entry
// so far. A destination that cannot be read is refused, its text quoted.
func (p *Proxy) begin(req *http.Request, first **egress.Decision) (egress.Request, egress.Target, bool) {
	e := egress.Request{Time: time.Now(), Method: req.Method}
	t, raw, err := target(req)
	if err != nil {
		e.Host, e.Rule = strconv.Quote(truncate(raw, 255)), "malformed destination: "+err.Error()
		return e, t, false
	}
	e.Host, e.Port = t.Host, t.Port
	d := p.decide(t, first)
	e.Allowed, e.Rule = d.Allowed, d.Rule
	return e, t, d.Allowed
}

// tunnel answers a CONNECT: refused, or a byte stream to the destination
// (not inspected) until either side is done.
func (p *Proxy) tunnel(c net.Conn, br *bufio.Reader, req *http.Request, first **egress.Decision) {
	e, t, ok := p.begin(req, first)
	defer func() { p.record(e) }()
	if !ok {
		e.Status = refuse(c, e)
		return
	}
	if cred := p.credentialFor(t); cred != nil {
		e.Note = "tunnelled without the " + cred.Header + " credential: a tunnel is not inspected, so the proxy cannot add it (use http:// for this destination)"
	}
	up, err := p.dial(t)
	if err != nil {
		p.dialFailed(c, &e, t, err)
		return
	}
	defer p.untrack(up)
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		e.Error = err.Error()
		return
	}
	e.Status = http.StatusOK
	// What the program sent after its request head is in br already.
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		w, err := up.Write(b)
		e.Sent += int64(w)
		if err != nil {
			e.Error = err.Error()
			return
		}
	}
	// Straight between the two sockets (io.Copy splices TCP to TCP):
	// the tunnel costs the host no copy through this process's memory.
	done := make(chan int64)
	go func() {
		n, _ := io.Copy(up, c)
		closeWrite(up)
		done <- n
	}()
	n, _ := io.Copy(c, up)
	closeWrite(c)
	e.Received = n
	e.Sent += <-done
}

// dialFailed answers a request whose destination could not be reached:
// refused when its name resolved to a denied address (the log names the
// deny rule), a bad gateway otherwise.
func (p *Proxy) dialFailed(c net.Conn, e *egress.Request, t egress.Target, err error) {
	var denied *deniedError
	if errors.As(err, &denied) {
		e.Allowed, e.Rule = false, denied.logRule()
		e.Status = refuse(c, *e)
		return
	}
	e.Error, e.Status = err.Error(), http.StatusBadGateway
	reply(c, e.Status, "cannot reach "+t.String())
}

// closeWrite half-closes a TCP connection, so that the other side reads
// EOF while its answer can still come back.
func closeWrite(c net.Conn) {
	if tc, ok := c.(interface{ CloseWrite() error }); ok {
		tc.CloseWrite()
	}
}

// forward answers one plain-HTTP request: refused, or passed on to its
// destination (with the credential for it, if any) and the response
// passed back. It reports whether the connection may serve another
// request.
func (p *Proxy) forward(c net.Conn, req *http.Request, first **egress.Decision) bool {
	e, t, ok := p.begin(req, first)
	defer func() { p.record(e) }()
	if !ok {
		e.Status = refuse(c, e)
		return false
	}
	up, err := p.dial(t)
	if err != nil {
		p.dialFailed(c, &e, t, err)
		return false
	}
	defer p.untrack(up)
	out := outgoing(req)
	if cred := p.credentialFor(t); cred != nil {
		out.Header.Set(cred.Header, cred.Value)
		e.Credential = cred.Header
	}
	if req.Header.Get("Expect") != "" {
		// The proxy does not pass Expect on (it would have to relay the
		// 100): it tells the program to go on itself.
		io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n")
	}
	sent := &countWriter{w: up}
	bw := bufio.NewWriter(sent)
	err = out.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	e.Sent = sent.n
	if err != nil {
		e.Error, e.Status = "sending the request: "+err.Error(), http.StatusBadGateway
		reply(c, e.Status, "cannot send the request to "+t.String())
		return false
	}
	resp, err := readResponse(bufio.NewReader(up), out)
	if err != nil {
		e.Error, e.Status = "reading the response: "+err.Error(), http.StatusBadGateway
		reply(c, e.Status, "no response from "+t.String())
		return false
	}
	defer resp.Body.Close()
	keep := !req.Close && delimited(resp, req.Method)
	removeHop(resp.Header)
	resp.Close = !keep
	resp.Proto, resp.ProtoMajor, resp.ProtoMinor = "HTTP/1.1", 1, 1
	got := &countWriter{w: c}
	cw := bufio.NewWriter(got)
	err = resp.Write(cw)
	if err == nil {
		err = cw.Flush()
	}
	e.Status, e.Received = resp.StatusCode, got.n
	if err != nil {
		e.Error = "passing the response on: " + err.Error()
		return false
	}
	return keep
}

// outgoing is req as the destination gets it: origin-form, the Host the
// program asked for (which is what was decided: for an absolute URL the
// request line's authority, never a Host header of its own), no
// hop-by-hop headers, and one request per connection.
func outgoing(req *http.Request) *http.Request {
	out := req.Clone(req.Context())
	out.Host = req.URL.Host
	out.RequestURI = ""
	removeHop(out.Header)
	out.Header.Del("Expect")
	out.Close = true
	return out
}

// removeHop deletes the hop-by-hop headers and those named in Connection.
func removeHop(h http.Header) {
	for _, v := range h.Values("Connection") {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, name := range hopHeaders {
		h.Del(name)
	}
}

// readResponse reads the destination's final response, skipping
// informational ones (1xx but 101).
func readResponse(br *bufio.Reader, req *http.Request) (*http.Response, error) {
	for {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
		resp.Body.Close()
	}
}

// delimited reports whether resp's end can be told without closing the
// connection, so that the program's connection may go on.
func delimited(resp *http.Response, method string) bool {
	switch {
	case resp.StatusCode == http.StatusSwitchingProtocols:
		return false
	case method == http.MethodHead, resp.StatusCode == http.StatusNoContent, resp.StatusCode == http.StatusNotModified:
		return true
	}
	return resp.ContentLength >= 0 || len(resp.TransferEncoding) > 0 && resp.TransferEncoding[0] == "chunked"
}

// refuse answers a refused request with 403 and why, and returns the status.
func refuse(c net.Conn, e egress.Request) int {
	status := http.StatusForbidden
	if strings.HasPrefix(e.Rule, "malformed") {
		status = http.StatusBadRequest
	}
	reply(c, status, fmt.Sprintf("%s %s refused: %s", e.Method, e.Destination(), e.Rule))
	return status
}

// reply writes the proxy's own response and ends the connection's
// service (Connection: close).
func reply(c net.Conn, status int, msg string) {
	body := "sandboxlab egress proxy: " + msg + "\n"
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, http.StatusText(status), len(body), body)
}

// truncate cuts s to at most n bytes.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
