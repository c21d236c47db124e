package egress

import (
	"fmt"
	"strings"
	"time"
)

// Request is one logged request: what the program asked for, what the
// proxy decided and by which rule, and what went through.
type Request struct {
	// Time is when the request arrived.
	Time time.Time `json:"time"`
	// Method is the request's method: CONNECT for a tunnel, GET, POST
	// and so on for a forwarded request; "" when none could be read.
	Method string `json:"method"`
	// Host and Port are the destination asked for (Host as the program
	// wrote it, quoted, when it is not a name or an address).
	Host string `json:"host"`
	Port int    `json:"port"`
	// Allowed says whether the request went through; Rule says what
	// decided ("allow P", "deny P", NoRule, or why it could not be read).
	Allowed bool   `json:"allowed"`
	Rule    string `json:"rule"`
	// Status is the HTTP status the program got: the destination's for a
	// forwarded request, 200 for an opened tunnel, the proxy's own (403,
	// 400, 502) otherwise.
	Status int `json:"status,omitempty"`
	// Sent counts the bytes that went from the program to the
	// destination (request line and headers included, as written to the
	// destination); Received those that came back to the program.
	Sent     int64 `json:"sent"`
	Received int64 `json:"received"`
	// Credential names the header the proxy added (never its value).
	Credential string `json:"credential,omitempty"`
	// Note says what else the program should know: a credential that a
	// tunnel could not carry.
	Note string `json:"note,omitempty"`
	// Error says why an allowed request failed (the destination could not
	// be resolved or reached, or the connection broke).
	Error string `json:"error,omitempty"`
}

// Destination returns host:port as the log shows it.
func (r Request) Destination() string {
	if strings.Contains(r.Host, ":") && !strings.HasPrefix(r.Host, "\"") {
		return fmt.Sprintf("[%s]:%d", r.Host, r.Port)
	}
	return fmt.Sprintf("%s:%d", r.Host, r.Port)
}

// String sums the request up in one line, as a person reads a log.
func (r Request) String() string {
	var b strings.Builder
	method := r.Method
	if method == "" {
		method = "-"
	}
	fmt.Fprintf(&b, "%s %s %s", r.Time.Format("15:04:05.000"), method, r.Destination())
	if r.Allowed {
		fmt.Fprintf(&b, " allowed (%s)", r.Rule)
	} else {
		fmt.Fprintf(&b, " refused (%s)", r.Rule)
	}
	if r.Status != 0 {
		fmt.Fprintf(&b, " status %d", r.Status)
	}
	fmt.Fprintf(&b, ", %d bytes sent, %d received", r.Sent, r.Received)
	if r.Credential != "" {
		fmt.Fprintf(&b, ", %s added", r.Credential)
	}
	if r.Note != "" {
		fmt.Fprintf(&b, "; %s", r.Note)
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "; error: %s", r.Error)
	}
	return b.String()
}
