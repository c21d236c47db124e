package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"time"

	"sandboxlab/mutants"
	"sandboxlab/sandbox/egress"
)

const (
	// maxConns is the most connections served at once; past it a new
	// one is closed and logged. Each costs the host two descriptors.
	maxConns = 64
	// maxHeaderBytes bounds what is read of one request's line and
	// headers, which the proxy must hold to decide.
	maxHeaderBytes = 64 << 10
	// dialTimeout bounds the connection to a destination.
	dialTimeout = 5 * time.Second
)

// ErrClosed is returned by Serve once the proxy is closed.
var ErrClosed = errors.New("egress proxy closed")

func init() {
	egress.Register(func(cfg egress.Config) (egress.Server, error) { return New(cfg) })
}

// Proxy is the egress proxy. Serve it one or more listeners; Close stops
// it and everything it serves.
type Proxy struct {
	rules    *egress.Rules
	creds    map[string]egress.Credential // by normalised destination
	resolve  map[string]netip.Addr
	logLimit int
	ctx      context.Context
	cancel   context.CancelFunc

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]struct{}
	active    int // client connections being served
	log       []egress.Request
	dropped   int
	wg        sync.WaitGroup
}

// New returns a proxy enforcing cfg.
func New(cfg egress.Config) (*Proxy, error) {
	c, err := egress.Compile(cfg)
	if err != nil {
		return nil, err
	}
	p := &Proxy{
		rules:     c.Rules,
		creds:     c.Credentials,
		resolve:   c.Resolve,
		logLimit:  c.LogLimit,
		listeners: map[net.Listener]struct{}{},
		conns:     map[net.Conn]struct{}{},
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p, nil
}

// Serve accepts connections on l and serves them until the proxy is
// closed (then it returns nil) or l fails for good. The proxy closes l.
func (p *Proxy) Serve(l net.Listener) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.Close()
		return ErrClosed
	}
	p.listeners[l] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.listeners, l)
		p.mu.Unlock()
		l.Close()
	}()
	backoff := 5 * time.Millisecond
	for {
		c, err := l.Accept()
		if err != nil {
			if p.isClosed() || errors.Is(err, net.ErrClosed) {
				return nil
			}
			// Out of descriptors, most likely: wait, as net/http does,
			// rather than leave the program without its proxy.
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		if p.admit(c) {
			go func() {
				defer p.release(c)
				p.serveConn(c)
			}()
		}
	}
}

// admit starts serving c unless the proxy is closed or serves too many
// connections already.
func (p *Proxy) admit(c net.Conn) bool {
	p.mu.Lock()
	switch {
	case p.closed:
		p.mu.Unlock()
		c.Close()
		return false
	case p.active >= maxConns:
		p.mu.Unlock()
		c.Close()
		p.record(egress.Request{Time: time.Now(), Rule: fmt.Sprintf("more than %d connections at once", maxConns)})
		return false
	}
	p.active++
	p.conns[c] = struct{}{}
	p.wg.Add(1)
	p.mu.Unlock()
	return true
}

// release ends the service of c.
func (p *Proxy) release(c net.Conn) {
	c.Close()
	p.mu.Lock()
	p.active--
	delete(p.conns, c)
	p.mu.Unlock()
	p.wg.Done()
}

// track registers a connection to a destination, so that Close closes
// it; false (and c closed) once the proxy is closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

// untrack forgets and closes a connection to a destination.
func (p *Proxy) untrack(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func (p *Proxy) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// Close stops the proxy: its listeners, every connection it serves or
// made, and the lookups and dials under way. It returns once every
// request has been logged. Calling it again does nothing.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for l := range p.listeners {
		l.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.cancel()
	p.wg.Wait()
	return nil
}

// record logs r, or counts it past the log's limit.
func (p *Proxy) record(r egress.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.log) < p.logLimit {
		p.log = append(p.log, r)
	} else {
		p.dropped++
	}
}

// Note logs something the proxy itself has to say about the run, as a
// refused request without a destination (why it cannot serve, say).
func (p *Proxy) Note(why string) {
	p.record(egress.Request{Time: time.Now(), Rule: why})
}

// Requests returns the log, in the order the requests arrived.
func (p *Proxy) Requests() []egress.Request {
	p.mu.Lock()
	out := slices.Clone(p.log)
	p.mu.Unlock()
	slices.SortStableFunc(out, func(a, b egress.Request) int { return a.Time.Compare(b.Time) })
	if out == nil {
		out = []egress.Request{}
	}
	return out
}

// Dropped returns how many requests came past the log's limit.
func (p *Proxy) Dropped() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropped
}

// decide judges a request for t on a connection whose earlier decision,
// if any, is *first.
func (p *Proxy) decide(t egress.Target, first **egress.Decision) egress.Decision {
	if *first != nil && mutants.On(mutants.EgressDecideOnce) {
		// The defect: the connection was judged at its first request, as
		// a proxy does that decides per connection and then relays.
		return **first
	}
	d := p.rules.Decide(t)
	if !d.Allowed && t.Addr.IsValid() && mutants.On(mutants.EgressIPByAddress) {
		// The defect: an address passes when an allowed name resolves
		// to it, as a filter on addresses rather than names does.
		d = p.byAddress(t, d)
	}
	if *first == nil {
		*first = &d
	}
	return d
}

// byAddress is the EgressIPByAddress defect: d, unless an exactly named
// allowed host resolves to t's address.
func (p *Proxy) byAddress(t egress.Target, d egress.Decision) egress.Decision {
	for _, pat := range p.rules.ExactNames(t.Port) {
		addrs, err := p.lookup(egress.Target{Host: pat.Name(), Port: t.Port})
		if err == nil && slices.Contains(addrs, t.Addr) {
			return egress.Decision{Allowed: true, Rule: "allow " + pat.String()}
		}
	}
	return d
}

// credentialFor returns the credential for t, or nil.
func (p *Proxy) credentialFor(t egress.Target) *egress.Credential {
	if c, ok := p.creds[t.String()]; ok {
		return &c
	}
	if mutants.On(mutants.EgressCredentialEverywhere) {
		// The defect: the header goes with every request, as a proxy
		// configured with one global header does.
		for _, c := range p.creds {
			return &c
		}
	}
	return nil
}

// lookup resolves t: an address is itself; a name in the resolver map is
// what the map says; any other name is asked of DNS, whose answers inside
// the host's own networks are dropped: the proxy runs on the host, and an
// allowed name must not become a way to the host's own services.
func (p *Proxy) lookup(t egress.Target) ([]netip.Addr, error) {
	if t.Addr.IsValid() {
		return []netip.Addr{t.Addr}, nil
	}
	if a, ok := p.resolve[t.Host]; ok {
		return []netip.Addr{a}, nil
	}
	ctx, cancel := context.WithTimeout(p.ctx, dialTimeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", t.Host)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", t.Host, err)
	}
	var out, inside []netip.Addr
	for _, a := range addrs {
		a = a.Unmap()
		if internal(a) {
			inside = append(inside, a)
		} else {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("resolving %s: DNS gave only addresses inside the host's own networks (%v); name it in the resolver map to allow that", t.Host, inside)
	}
	return out, nil
}

// internal reports whether a lies in the host's own networks.
func internal(a netip.Addr) bool {
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified()
}

// deniedError is dial's refusal of a name that resolved to an address a
// deny rule names.
type deniedError struct {
	rule string // the deny rule, as the log shows it: "deny P"
	name string
	addr netip.Addr
}

func (e *deniedError) Error() string {
	return fmt.Sprintf("%s resolves to %s, which %s names", e.name, e.addr, e.rule)
}

// logRule is the Rule the log gives the refusal: the deny rule, with the
// name and address that led to it.
func (e *deniedError) logRule() string {
	return fmt.Sprintf("%s (%s resolves to %s)", e.rule, e.name, e.addr)
}

// dial connects to t, trying each of its addresses, and tracks the
// connection. A name that resolves to an address a deny rule names is
// refused (*deniedError) before any address is tried: whichever of its
// addresses the connection would take, a name that leads to a denied
// address is not one to trust with the others.
func (p *Proxy) dial(t egress.Target) (net.Conn, error) {
	addrs, err := p.lookup(t)
	if err != nil {
		return nil, err
	}
	if !t.Addr.IsValid() {
		for _, a := range addrs {
			// The defect's site is asked only where a deny rule names the
			// address, where it can change the answer.
			if rule, denied := p.rules.DeniedAddress(a, t.Port); denied && !mutants.On(mutants.EgressDenyByName) {
				return nil, &deniedError{rule: "deny " + rule.String(), name: t.Host, addr: a}
			}
		}
	}
	d := net.Dialer{Timeout: dialTimeout}
	var errs []error
	for _, a := range addrs {
		c, err := d.DialContext(p.ctx, "tcp", netip.AddrPortFrom(a, uint16(t.Port)).String())
		if err == nil {
			if !p.track(c) {
				return nil, ErrClosed
			}
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("connecting to %s: %w", t, errors.Join(errs...))
}

// portOf parses a URL's port ("" is def).
func portOf(s string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	return strconv.Atoi(s)
}
