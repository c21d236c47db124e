package egress

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
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

// DefaultLogLimit bounds the log, so that a program making requests in a
// loop cannot fill the host's memory with it.
const DefaultLogLimit = 1000

// Compiled is a Config checked and in the form the proxy enforces it.
type Compiled struct {
	Rules *Rules
	// Credentials are by normalised destination (Target.String).
	Credentials map[string]Credential
	// Resolve maps normalised names to their address.
	Resolve  map[string]netip.Addr
	LogLimit int
}

// Compile checks cfg and returns it compiled: a malformed rule, name or
// address, or a credential that could never be used, is an error.
func Compile(cfg Config) (*Compiled, error) {
	rules, err := NewRules(cfg.Allow, cfg.Deny)
	if err != nil {
		return nil, err
	}
	c := &Compiled{Rules: rules, Credentials: map[string]Credential{}, Resolve: map[string]netip.Addr{}, LogLimit: cfg.LogLimit}
	if c.LogLimit <= 0 {
		c.LogLimit = DefaultLogLimit
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
		c.Resolve[t.Host] = a.Unmap()
	}
	for _, cr := range cfg.Credentials {
		t, err := parseDestination(cr.Destination)
		if err != nil {
			return nil, fmt.Errorf("credential %s: %w", cr, err)
		}
		if err := checkHeader(cr.Header, cr.Value); err != nil {
			return nil, fmt.Errorf("credential %s: %w", cr, err)
		}
		if d := rules.Decide(t); !d.Allowed {
			return nil, fmt.Errorf("credential %s: the rules refuse %s (%s), so it would never be sent", cr, t, d.Rule)
		}
		if _, dup := c.Credentials[t.String()]; dup {
			return nil, fmt.Errorf("credential %s: a second credential for %s", cr, t)
		}
		c.Credentials[t.String()] = cr
	}
	return c, nil
}

// CheckConfig reports the first thing wrong with cfg: a malformed rule,
// name or address, or a credential that could never be used.
func CheckConfig(cfg Config) error {
	_, err := Compile(cfg)
	return err
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

// framingHeaders are those a credential may not be: they frame the
// message or the connection, or name the destination. Lower case.
var framingHeaders = []string{
	"host", "content-length", "transfer-encoding", "connection", "proxy-connection", "keep-alive",
	"te", "trailer", "upgrade", "expect", "proxy-authorization", "proxy-authenticate",
}

// Server is a running egress proxy. The one that serves is package
// proxy's, which links net/http and TLS for it; a binary that imports
// that package has it (Linked), one that does not starts none and says
// so (ErrNotLinked), and pays for none of it at its start.
type Server interface {
	// Serve accepts connections on l and serves them until the server
	// is closed; the server closes l.
	Serve(l net.Listener) error
	// Close stops the server and everything it serves.
	Close() error
	// Note logs a line that is no request (why the proxy never served).
	Note(why string)
	// Requests is the log, in the order the requests arrived; Dropped
	// counts those past the log's limit.
	Requests() []Request
	Dropped() int
}

var newServer func(Config) (Server, error)

// Register makes f the maker of servers; package proxy calls it from
// its initialiser.
func Register(f func(Config) (Server, error)) { newServer = f }

// Linked reports whether this binary has a server to start.
func Linked() bool { return newServer != nil }

// ErrNotLinked is NewServer's error in a binary without package proxy.
var ErrNotLinked = errors.New("this binary does not link the egress proxy (package sandboxlab/sandbox/egress/proxy)")

// NewServer returns a server enforcing cfg.
func NewServer(cfg Config) (Server, error) {
	if newServer == nil {
		return nil, ErrNotLinked
	}
	return newServer(cfg)
}
