package evidence

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Destination is an HTTP server on a loopback address of its own,
// standing in for a host on the internet: one a policy allows, or one a
// program must not reach. It records every connection, byte and request
// that reaches it, and answers each request with its token (or, as an
// echo server, with the headers it received), so that a check can tell
// that the program really got its answer. Its owner starts it, names it
// to the policy, and reads it (Received) once no process of the program
// is left.
type Destination struct {
	addr  netip.AddrPort
	ln    net.Listener
	srv   *http.Server
	echo  bool
	token string

	mu       sync.Mutex
	conns    int
	bytes    int64
	requests []Seen

	closeOnce sync.Once
}

// Seen is one request a destination received.
type Seen struct {
	Method, Host, Path string
	Header             http.Header
}

// StartDestination starts a destination on a random address of
// 127.0.0.0/8 other than 127.0.0.1 (where the host's own services
// listen), on port, or on a random port when port is 0. An echo
// destination answers with the request's headers, as an echo service or
// a debugging endpoint does.
func StartDestination(port int, echo bool) (*Destination, error) {
	var errs []error
	for range 20 {
		d, err := startDestination(netip.AddrPortFrom(randomLoopback(), uint16(port)), echo)
		if errors.Is(err, syscall.EADDRINUSE) {
			errs = append(errs, err)
			continue // that address has the port taken; try another
		}
		return d, err
	}
	return nil, fmt.Errorf("starting a destination on port %d: every address tried has it taken: %w", port, errors.Join(errs...))
}

// StartDestinationOn starts a destination on addr, the address of
// another one, at a random port: one host, two services.
func StartDestinationOn(addr netip.Addr, echo bool) (*Destination, error) {
	return startDestination(netip.AddrPortFrom(addr, 0), echo)
}

func startDestination(at netip.AddrPort, echo bool) (*Destination, error) {
	ln, err := net.Listen("tcp4", at.String())
	if err != nil {
		return nil, fmt.Errorf("starting a destination: %w", err)
	}
	d := &Destination{addr: ln.Addr().(*net.TCPAddr).AddrPort(), echo: echo, token: randomToken()}
	d.ln = &countingListener{Listener: ln, d: d}
	d.srv = &http.Server{Handler: http.HandlerFunc(d.serve), ErrorLog: log.New(io.Discard, "", 0),
		ReadHeaderTimeout: 5 * time.Second}
	go d.srv.Serve(d.ln)
	return d, nil
}

// randomLoopback returns an address of 127.0.0.0/8 from 127.0.0.2 to
// 127.255.255.254, so that concurrent checks rarely meet.
func randomLoopback() netip.Addr {
	n, _ := rand.Int(rand.Reader, big.NewInt(1<<24-3))
	v := n.Int64() + 2
	return netip.AddrFrom4([4]byte{127, byte(v >> 16), byte(v >> 8), byte(v)})
}

func randomToken() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Addr is the destination's address and port.
func (d *Destination) Addr() netip.AddrPort { return d.addr }

// IP is the destination's address as text.
func (d *Destination) IP() string { return d.addr.Addr().String() }

// Port is the destination's port.
func (d *Destination) Port() int { return int(d.addr.Port()) }

// Token is what the destination answers (a non-echo one), random: a
// program that prints it got the answer.
func (d *Destination) Token() string { return d.token }

func (d *Destination) serve(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	d.requests = append(d.requests, Seen{Method: r.Method, Host: r.Host, Path: r.URL.Path, Header: r.Header.Clone()})
	d.mu.Unlock()
	io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
	w.Header().Set("Content-Type", "text/plain")
	if !d.echo {
		io.WriteString(w, d.token+"\n")
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL.RequestURI())
	names := make([]string, 0, len(r.Header))
	for name := range r.Header {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, v := range r.Header[name] {
			fmt.Fprintf(&b, "%s: %s\n", name, v)
		}
	}
	io.WriteString(w, b.String())
}

// Close stops the destination once what reached it has been read: the
// connections still open (a tunnel the proxy has closed by now) are
// given a moment to end. Call it when no process of the program is left.
// Calling it again does nothing.
func (d *Destination) Close() {
	d.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if d.srv.Shutdown(ctx) != nil {
			d.srv.Close()
		}
	})
}

// Received closes the destination (see Close) and returns what reached
// it: the connections, the bytes and the requests.
func (d *Destination) Received() (conns int, bytes int64, requests []Seen) {
	d.Close()
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.conns, d.bytes, slices.Clone(d.requests)
}

// Paths returns the paths of the requests that reached it (see Received).
func (d *Destination) Paths() []string {
	_, _, reqs := d.Received()
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.Path
	}
	return out
}

// Contains reports whether s appeared anywhere in a request that reached
// it: its host, path or a header's name or value (see Received).
func (d *Destination) Contains(s string) bool {
	_, _, reqs := d.Received()
	for _, r := range reqs {
		if strings.Contains(r.Host, s) || strings.Contains(r.Path, s) {
			return true
		}
		for name, vs := range r.Header {
			if strings.Contains(name, s) || slices.ContainsFunc(vs, func(v string) bool { return strings.Contains(v, s) }) {
				return true
			}
		}
	}
	return false
}

// String names the destination for evidence.
func (d *Destination) String() string { return net.JoinHostPort(d.IP(), strconv.Itoa(d.Port())) }

// countingListener counts the connections and bytes that reach d.
type countingListener struct {
	net.Listener
	d *Destination
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.d.mu.Lock()
	l.d.conns++
	l.d.mu.Unlock()
	return &countingConn{Conn: c, d: l.d}, nil
}

type countingConn struct {
	net.Conn
	d *Destination
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.d.mu.Lock()
		c.d.bytes += int64(n)
		c.d.mu.Unlock()
	}
	return n, err
}
