package egress

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func mustTarget(t *testing.T, host string, port int) Target {
	t.Helper()
	tg, err := ParseTarget(host, port)
	assert.NilError(t, err, "%s:%d", host, port)
	return tg
}

// TestLabelMatching: a wildcard admits subdomains only, label by label;
// an exact name only itself; an address only itself; the port always
// counts. The lookalikes are the ones a string-suffix match lets through.
func TestLabelMatching(t *testing.T) {
	rules, err := NewRules([]string{"*.example.com:443", "api.test:8080", "127.0.0.9:80", "[::1]:81", "any.test:*"}, nil)
	assert.NilError(t, err)
	for _, tc := range []struct {
		host string
		port int
		want bool
	}{
		{"a.example.com", 443, true},
		{"a.b.example.com", 443, true},
		{"A.Example.COM.", 443, true}, // normalised: case and one trailing dot
		{"example.com", 443, false},   // *. is for subdomains only
		{"evilexample.com", 443, false},
		{"example.com.evil.test", 443, false},
		{"a.example.com", 80, false},
		{"api.test", 8080, true},
		{"api.test", 8081, false},
		{"xapi.test", 8080, false},
		{"a.api.test", 8080, false},
		{"127.0.0.9", 80, true},
		{"127.0.0.9", 81, false},
		{"::ffff:127.0.0.9", 80, true}, // the same address, mapped
		{"127.0.0.10", 80, false},
		{"::1", 81, true},
		{"any.test", 1, true},
		{"any.test", 65535, true},
	} {
		d := rules.Decide(mustTarget(t, tc.host, tc.port))
		assert.Check(t, is.Equal(d.Allowed, tc.want), "%s:%d (%s)", tc.host, tc.port, d.Rule)
	}
}

// TestDenyWins: a deny rule beats any allow rule, and names itself.
func TestDenyWins(t *testing.T) {
	rules, err := NewRules([]string{"*.corp.test:80"}, []string{"vault.corp.test:80", "*.secret.corp.test:*"})
	assert.NilError(t, err)
	d := rules.Decide(mustTarget(t, "wiki.corp.test", 80))
	assert.Check(t, is.DeepEqual(d, Decision{Allowed: true, Rule: "allow *.corp.test:80"}))
	d = rules.Decide(mustTarget(t, "vault.corp.test", 80))
	assert.Check(t, is.DeepEqual(d, Decision{Rule: "deny vault.corp.test:80"}))
	d = rules.Decide(mustTarget(t, "x.secret.corp.test", 80))
	assert.Check(t, is.DeepEqual(d, Decision{Rule: "deny *.secret.corp.test:*"}))
	d = rules.Decide(mustTarget(t, "elsewhere.test", 80))
	assert.Check(t, is.DeepEqual(d, Decision{Rule: NoRule}))
}

// TestBadPatterns: what ParsePattern refuses, with a reason.
func TestBadPatterns(t *testing.T) {
	for _, tc := range []struct{ in, why string }{
		{"example.com", "want host:port"},
		{"*:443", "a lone *"},
		{"*.com:443", "whole top-level domain"},
		{"a.*.com:443", "leading label"},
		{"ex*ample.com:443", "leading label"},
		{"example.com:0", "want 1 to 65535"},
		{"example.com:http", "want 1 to 65535"},
		{"exa mple.com:80", "character"},
		{"-a.com:80", "begins or ends"},
		{"a..com:80", "empty"},
		{"127.1:80", "all digits"},
		{"0x7f.1:80", "all digits"},
		{"[fe80::1%eth0]:80", "zone"},
		{"bücher.de:80", "xn--"},
	} {
		_, err := ParsePattern(tc.in)
		assert.Check(t, is.ErrorIs(err, ErrPattern), tc.in)
		assert.Check(t, is.ErrorContains(err, tc.why), tc.in)
	}
	p, err := ParsePattern("*.Example.COM:*")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(p.String(), "*.example.com:*"))
}

// TestBadTargets: a request's host must be a name or an address.
func TestBadTargets(t *testing.T) {
	for _, host := range []string{"", "a b", "127.1", "evil.test\x00.ok.test", "a..b", "x%2e.test"} {
		_, err := ParseTarget(host, 80)
		assert.Check(t, is.ErrorIs(err, ErrPattern), "%q", host)
	}
	_, err := ParseTarget("ok.test", 0)
	assert.Check(t, is.ErrorIs(err, ErrPattern))
}
