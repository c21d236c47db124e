package egress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"sandboxlab/mutants"
)

// Credential is a header the proxy adds to the program's plain-HTTP
// requests for one destination, and to no others. Its value stays in the
// proxy's process: it is never in the program's environment, files or
// arguments, and String and MarshalJSON leave it out.
type Credential struct {
	// Destination is the one host:port (no wildcard) whose requests
	// carry it; an allow rule must admit it and no deny rule refuse it.
	Destination string
	// Header is the header's name ("Authorization", "X-Api-Key"). The
	// program's own header of that name, if it sends one, is replaced.
	Header string
	// Value is the secret.
	Value string
}

// String names the credential without its value.
func (c Credential) String() string {
	return c.Header + " for " + c.Destination + " (value withheld)"
}

// GoString is String: %#v must not print the value either.
func (c Credential) GoString() string { return c.String() }

// MarshalJSON encodes the credential without its value.
func (c Credential) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Destination string `json:"destination"`
		Header      string `json:"header"`
		Value       string `json:"value"`
	}{c.Destination, c.Header, "(withheld)"})
}

// Config is what the proxy enforces.
type Config struct {
	// Allow and Deny are the rules (see ParsePattern); a deny wins.
	Allow, Deny []string
	// Credentials are the headers to add, one destination each.
	Credentials []Credential
	// Resolve maps names to the address the proxy connects to for them,
	// before DNS is asked (and whatever DNS would say).
	Resolve map[string]string
	// LogLimit is the most requests logged (0: DefaultLogLimit); the
	// requests past it are only counted (Proxy.Dropped).
	LogLimit int
}

const (
	// DefaultLogLimit bounds the log, so that a program making requests
	// in a loop cannot fill the host's memory with it.
	DefaultLogLimit = 1000
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

// Proxy is the egress proxy. Serve it one or more listeners; Close stops
// it and everything it serves.
type Proxy struct {
	rules    *Rules
	creds    map[string]Credential // by normalised destination
	resolve  map[string]netip.Addr
	logLimit int
	ctx      context.Context
	cancel   context.CancelFunc

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]struct{}
	active    int // client connections being served
	log       []Request
	dropped   int
	wg        sync.WaitGroup
}

// CheckConfig reports the first thing wrong with cfg: a malformed rule,
// name or address, or a credential that could never be used.
func CheckConfig(cfg Config) error {
	_, err := New(cfg)
	return err
}

// New returns a proxy enforcing cfg.
func New(cfg Config) (*Proxy, error) {
	rules, err := NewRules(cfg.Allow, cfg.Deny)
	if err != nil {
		return nil, err
	}
	p := &Proxy{
		rules:     rules,
		creds:     map[string]Credential{},
		resolve:   map[string]netip.Addr{},
		logLimit:  cfg.LogLimit,
		listeners: map[net.Listener]struct{}{},
		conns:     map[net.Conn]struct{}{},
	}
	if p.logLimit <= 0 {
		p.logLimit = DefaultLogLimit
	}
	for name, addr := range cfg.Resolve {
		t, err := ParseTarget(name, 1)
		if err != nil || t.Addr.IsValid() {
			return nil, fmt.Errorf("resolve: %q is not a name", name)
		}
		a, err := netip.ParseAddr(addr)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("resolve: %s: %q is not an IP address", name, addr)
		}
		p.resolve[t.Host] = a.Unmap()
	}
	for _, c := range cfg.Credentials {
		t, err := parseDestination(c.Destination)
		if err != nil {
			return nil, fmt.Errorf("credential %s: %w", c, err)
		}
		if err := checkHeader(c.Header, c.Value); err != nil {
			return nil, fmt.Errorf("credential %s: %w", c, err)
		}
		if d := rules.Decide(t); !d.Allowed {
			return nil, fmt.Errorf("credential %s: the rules refuse %s (%s), so it would never be sent", c, t, d.Rule)
		}
		if _, dup := p.creds[t.String()]; dup {
			return nil, fmt.Errorf("credential %s: a second credential for %s", c, t)
		}
		p.creds[t.String()] = c
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p, nil
}

// parseDestination parses one exact host:port.
func parseDestination(s string) (Target, error) {
	host, portText, err := net.SplitHostPort(s)
	if err != nil {
		return Target{}, fmt.Errorf("%w: destination %q: want host:port", ErrPattern, s)
	}
	if strings.Contains(host, "*") {
		return Target{}, fmt.Errorf("%w: destination %q: one host, no wildcard", ErrPattern, s)
	}
	port, err := parsePort(portText)
	if err != nil {
		return Target{}, fmt.Errorf("%w: destination %q: %v", ErrPattern, s, err)
	}
	return ParseTarget(host, port)
}

// checkHeader refuses a header the proxy must not set: a malformed name,
// one that frames the message or the connection, or a value that would
// end the header.
func checkHeader(name, value string) error {
	if name == "" {
		return errors.New("no header name")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return fmt.Errorf("header name %q: character %q", name, c)
		}
	}
	if slices.Contains(framingHeaders, strings.ToLower(name)) {
		return fmt.Errorf("header %s frames the request or the connection; the proxy sets it itself", name)
	}
	if value == "" {
		return errors.New("an empty value")
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return errors.New("a value with a line break or NUL")
	}
	return nil
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
		p.record(Request{Time: time.Now(), Rule: fmt.Sprintf("more than %d connections at once", maxConns)})
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
func (p *Proxy) record(r Request) {
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
	p.record(Request{Time: time.Now(), Rule: why})
}

// Requests returns the log, in the order the requests arrived.
func (p *Proxy) Requests() []Request {
	p.mu.Lock()
	out := slices.Clone(p.log)
	p.mu.Unlock()
	slices.SortStableFunc(out, func(a, b Request) int { return a.Time.Compare(b.Time) })
	if out == nil {
		out = []Request{}
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
func (p *Proxy) decide(t Target, first **Decision) Decision {
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
func (p *Proxy) byAddress(t Target, d Decision) Decision {
	for _, pat := range p.rules.exactNames(t.Port) {
		addrs, err := p.lookup(Target{Host: pat.name, Port: t.Port})
		if err == nil && slices.Contains(addrs, t.Addr) {
			return Decision{Allowed: true, Rule: "allow " + pat.text}
		}
	}
	return d
}

// credentialFor returns the credential for t, or nil.
func (p *Proxy) credentialFor(t Target) *Credential {
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
func (p *Proxy) lookup(t Target) ([]netip.Addr, error) {
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
func (p *Proxy) dial(t Target) (net.Conn, error) {
	addrs, err := p.lookup(t)
	if err != nil {
		return nil, err
	}
	if !t.Addr.IsValid() {
		for _, a := range addrs {
			// The defect's site is asked only where a deny rule names the
			// address, where it can change the answer.
			if rule, denied := p.rules.deniedAddress(a, t.Port); denied && !mutants.On(mutants.EgressDenyByName) {
				return nil, &deniedError{rule: "deny " + rule.text, name: t.Host, addr: a}
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
