package mcpserver

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Tokens are the principals a server over HTTP serves, each by a bearer
// token: what a token file holds.
type Tokens struct {
	byName map[string][sha256.Size]byte
	names  []string // in the file's order
}

// minTokenLen bounds a token from below: 128 bits as hex.
const minTokenLen = 32

// principalName is what a principal's name may be: it is logged and
// shown, so it is plain.
var principalName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ReadTokens reads a token file: one `NAME TOKEN` a line; blank lines and
// lines starting with # are skipped. The file must be readable by its
// owner only, as an SSH key must: the tokens are passwords. The errors
// name a line, never a token.
func ReadTokens(path string) (*Tokens, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the token file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading the token file: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("the token file %s is readable by others (mode %04o): chmod 600 it", path, st.Mode().Perm())
	}
	t := &Tokens{byName: map[string][sha256.Size]byte{}}
	seen := map[[sha256.Size]byte]bool{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		switch {
		case len(fields) != 2:
			return nil, fmt.Errorf("%s:%d: want NAME TOKEN, got %d fields", path, n, len(fields))
		case !principalName.MatchString(fields[0]):
			return nil, fmt.Errorf("%s:%d: the name %q: want letters, digits, '.', '_' and '-', at most 64", path, n, fields[0])
		case len(fields[1]) < minTokenLen:
			return nil, fmt.Errorf("%s:%d: %s's token is %d characters, under %d (32 random bytes in hex will do)",
				path, n, fields[0], len(fields[1]), minTokenLen)
		}
		name, sum := fields[0], sha256.Sum256([]byte(fields[1]))
		if _, dup := t.byName[name]; dup {
			return nil, fmt.Errorf("%s:%d: %s is named twice", path, n, name)
		}
		if seen[sum] {
			return nil, fmt.Errorf("%s:%d: %s's token is another principal's too", path, n, name)
		}
		seen[sum] = true
		t.byName[name] = sum
		t.names = append(t.names, name)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the token file: %w", err)
	}
	if len(t.names) == 0 {
		return nil, fmt.Errorf("the token file %s names no principal", path)
	}
	return t, nil
}

// Names returns the principals, in the file's order.
func (t *Tokens) Names() []string { return append([]string(nil), t.names...) }

// principal returns whose token token is, or "". Every principal's
// digest is compared, in constant time, whatever matches: the time taken
// says nothing of which token, or how much of one, was right.
func (t *Tokens) principal(token string) string {
	sum := sha256.Sum256([]byte(token))
	found := ""
	for _, name := range t.names {
		want := t.byName[name]
		if subtle.ConstantTimeCompare(sum[:], want[:]) == 1 {
			found = name
		}
	}
	return found
}

// realm names the server in a challenge.
const realm = "sandboxlab"

// authenticate wraps next so that every request must carry one of the
// tokens as `Authorization: Bearer TOKEN`: anything else gets 401 with a
// challenge (RFC 6750), and never reaches the MCP handler. The
// principal reaches the tools as the SDK's TokenInfo (UserID), which
// also binds each MCP session to the principal that opened it.
func (t *Tokens) authenticate(next http.Handler) http.Handler {
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		name := t.principal(token)
		if name == "" {
			return nil, auth.ErrInvalidToken
		}
		// The tokens do not expire: the file is the authority, and a
		// restart reads it again.
		return &auth.TokenInfo{UserID: name, Expiration: time.Now().Add(24 * time.Hour)}, nil
	}
	inner := auth.RequireBearerToken(verify, nil)(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		switch {
		case !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "":
			w.Header().Set("WWW-Authenticate", fmt.Sprintf("Bearer realm=%q", realm))
			http.Error(w, "this server needs a bearer token (Authorization: Bearer TOKEN)", http.StatusUnauthorized)
		case t.principal(strings.TrimSpace(token)) == "":
			w.Header().Set("WWW-Authenticate", fmt.Sprintf("Bearer realm=%q, error=\"invalid_token\"", realm))
			http.Error(w, "the bearer token is not one this server knows", http.StatusUnauthorized)
		default:
			inner.ServeHTTP(w, r)
		}
	})
}

// errNoPrincipal is a tool call over HTTP that reached a handler without
// a principal: a bug, since authenticate lets none through.
var errNoPrincipal = errors.New("the request carries no principal")
