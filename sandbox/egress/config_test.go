package egress

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestNoServerUnlinked: this package's own test binary does not link
// package proxy, so no server starts, and the refusal names what to
// import; a bad configuration is still refused as bad.
func TestNoServerUnlinked(t *testing.T) {
	assert.Check(t, !Linked())
	_, err := NewServer(Config{Allow: []string{"a.test:80"}})
	assert.Check(t, is.ErrorIs(err, ErrNotLinked))
	assert.Check(t, is.ErrorContains(err, "sandbox/egress/proxy"))
	assert.Check(t, is.ErrorContains(CheckConfig(Config{Allow: []string{"*.com:443"}}), "top-level domain"))
	assert.NilError(t, CheckConfig(Config{Allow: []string{"a.test:80"}}))
}
