package egress

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"sandboxlab/mutants"
)

// ErrPattern wraps every error about a malformed pattern or destination.
var ErrPattern = errors.New("bad destination pattern")

// Pattern is one rule's destination: a host (an exact name, "*." and a
// name, or an IP literal) and a port (0 for "*").
type Pattern struct {
	text     string     // as written, normalised: "*.example.com:443"
	name     string     // the name, without "*." ("" for an address)
	wildcard bool       // "*.": subdomains of name only
	addr     netip.Addr // the address of an IP-literal pattern
	port     int        // 0: any port
}

// String returns the pattern as written (normalised to lower case).
func (p Pattern) String() string { return p.text }

// Name is the pattern's name without "*." ("" for an address).
func (p Pattern) Name() string { return p.name }

// ParsePattern parses "host:port". host is a DNS name, "*." and a name of
// at least two labels (a wildcard over a whole top-level domain admits
// anyone's names), or an IP literal (IPv6 in brackets); port is 1–65535
// or "*". A lone "*" is refused: to allow everything, give the program
// the host's network instead and say so.
func ParsePattern(s string) (Pattern, error) {
	host, portText, err := net.SplitHostPort(s)
	if err != nil {
		return Pattern{}, fmt.Errorf("%w %q: want host:port (%v)", ErrPattern, s, err)
	}
	p := Pattern{}
	if portText != "*" {
		if p.port, err = parsePort(portText); err != nil {
			return Pattern{}, fmt.Errorf("%w %q: %v", ErrPattern, s, err)
		}
	}
	host = strings.ToLower(host)
	switch {
	case host == "*":
		return Pattern{}, fmt.Errorf("%w %q: a lone * would allow every destination", ErrPattern, s)
	case strings.HasPrefix(host, "*."):
		p.wildcard, p.name = true, strings.TrimPrefix(host, "*.")
		if err := checkName(p.name); err != nil {
			return Pattern{}, fmt.Errorf("%w %q: %v", ErrPattern, s, err)
		}
		if !strings.Contains(p.name, ".") {
			return Pattern{}, fmt.Errorf("%w %q: a wildcard over a whole top-level domain admits anyone's names", ErrPattern, s)
		}
	case strings.Contains(host, "*"):
		return Pattern{}, fmt.Errorf("%w %q: * stands only for a leading label, as in *.example.com", ErrPattern, s)
	default:
		if a, err := netip.ParseAddr(host); err == nil {
			if a.Zone() != "" {
				return Pattern{}, fmt.Errorf("%w %q: an address with a zone", ErrPattern, s)
			}
			p.addr = a.Unmap()
			break
		}
		if err := checkName(host); err != nil {
			return Pattern{}, fmt.Errorf("%w %q: %v", ErrPattern, s, err)
		}
		p.name = host
	}
	p.text = formatPattern(p, portText)
	return p, nil
}

// formatPattern writes p back as text.
func formatPattern(p Pattern, portText string) string {
	host := p.name
	switch {
	case p.wildcard:
		host = "*." + p.name
	case p.addr.IsValid():
		host = p.addr.String()
	}
	if p.port != 0 {
		portText = strconv.Itoa(p.port)
	}
	return net.JoinHostPort(host, portText)
}

// parsePort parses a port number, 1–65535.
func parsePort(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %q: want 1 to 65535", s)
	}
	return n, nil
}

// checkName accepts a DNS name in lower case: labels of letters, digits,
// '-' and '_' (not at a label's ends for '-'), 1–63 bytes each, 253 in
// all, the last not all digits. Anything else is refused rather than
// guessed at: a resolver that reads "127.1" or "0x7f.1" as an address
// would reach what no rule names.
func checkName(name string) error {
	if name == "" || len(name) > 253 {
		return fmt.Errorf("name %q: want 1 to 253 characters", name)
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return fmt.Errorf("name %q: empty or over-long label", name)
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("name %q: a label begins or ends with '-'", name)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("name %q: character %q (names are ASCII letters, digits, '-' and '_'; write an IDN in its xn-- form)", name, c)
			}
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return fmt.Errorf("name %q: the last label is all digits, as in no real name (an address must be written in full)", name)
	}
	return nil
}

// Target is a destination a program asked for, normalised: a name in
// lower case without a trailing dot, or an address.
type Target struct {
	// Host is the name or the address as text.
	Host string
	// Port is the port.
	Port int
	// Addr is the address when Host is an IP literal.
	Addr netip.Addr
}

// String returns host:port.
func (t Target) String() string { return net.JoinHostPort(t.Host, strconv.Itoa(t.Port)) }

// ParseTarget parses the host and port of a request. A name is
// normalised (lower case, one trailing dot dropped) and must be a name
// checkName accepts; an address may not carry a zone.
func ParseTarget(host string, port int) (Target, error) {
	if port < 1 || port > 65535 {
		return Target{}, fmt.Errorf("%w: port %d", ErrPattern, port)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return Target{}, fmt.Errorf("%w: address %q with a zone", ErrPattern, host)
		}
		a = a.Unmap()
		return Target{Host: a.String(), Port: port, Addr: a}, nil
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if err := checkName(name); err != nil {
		return Target{}, fmt.Errorf("%w: %v", ErrPattern, err)
	}
	return Target{Host: name, Port: port}, nil
}

// matches reports whether p admits t: a name pattern only names, label
// by label; an address pattern only that address.
func (p Pattern) matches(t Target) bool {
	if p.port != 0 && p.port != t.Port && !mutants.On(mutants.EgressPortIgnored) {
		return false
	}
	if p.addr.IsValid() || t.Addr.IsValid() {
		return p.addr == t.Addr
	}
	if mutants.On(mutants.EgressSuffixMatch) {
		// The defect: the rule's name as a string suffix, as a quick
		// HasSuffix check reads "*.example.com", so that
		// "evilexample.com" passes too.
		return strings.HasSuffix(t.Host, p.name)
	}
	if p.wildcard {
		// A dot before the name: "a.example.com", never "example.com"
		// itself or "evilexample.com".
		return strings.HasSuffix(t.Host, "."+p.name)
	}
	return t.Host == p.name
}

// Rules are the allow and deny lists.
type Rules struct {
	allow, deny []Pattern
}

// NewRules parses the allow and deny lists.
func NewRules(allow, deny []string) (*Rules, error) {
	r := &Rules{}
	for _, s := range allow {
		p, err := ParsePattern(s)
		if err != nil {
			return nil, fmt.Errorf("allow: %w", err)
		}
		r.allow = append(r.allow, p)
	}
	for _, s := range deny {
		p, err := ParsePattern(s)
		if err != nil {
			return nil, fmt.Errorf("deny: %w", err)
		}
		r.deny = append(r.deny, p)
	}
	return r, nil
}

// Decision is the verdict on one request.
type Decision struct {
	// Allowed says whether the request may go through.
	Allowed bool
	// Rule names what decided: "allow P", "deny P", or why no rule
	// could admit it.
	Rule string
}

// NoRule is the Rule of a destination no allow rule admits.
const NoRule = "no allow rule matches"

// Decide judges a request for t: a deny rule that matches wins, then the
// first allow rule that matches admits it, and anything else is refused.
func (r *Rules) Decide(t Target) Decision {
	if !mutants.On(mutants.EgressDenyIgnored) {
		for _, p := range r.deny {
			if p.matches(t) {
				return Decision{Rule: "deny " + p.text}
			}
		}
	}
	for _, p := range r.allow {
		if p.matches(t) {
			return Decision{Allowed: true, Rule: "allow " + p.text}
		}
	}
	return Decision{Rule: NoRule}
}

// DeniedAddress returns the deny rule that names address a on port, if
// any. A deny rule on an address holds whatever name leads there: it is
// asked of every address a name resolves to (see Proxy.dial). Allow rules
// are never asked this way: an allowed address admits that address only,
// not the names that resolve to it.
func (r *Rules) DeniedAddress(a netip.Addr, port int) (Pattern, bool) {
	t := Target{Host: a.String(), Port: port, Addr: a}
	for _, p := range r.deny {
		if p.addr.IsValid() && p.matches(t) {
			return p, true
		}
	}
	return Pattern{}, false
}

// ExactNames returns the allow rules that name one host (no wildcard,
// no address) and admit port: the rules whose addresses a lookup can
// tell.
func (r *Rules) ExactNames(port int) []Pattern {
	var out []Pattern
	for _, p := range r.allow {
		if p.name != "" && !p.wildcard && (p.port == 0 || p.port == port) {
			out = append(out, p)
		}
	}
	return out
}
