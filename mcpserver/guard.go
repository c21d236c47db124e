package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's stdio transport ends the connection at the first line it
// cannot decode (not JSON, not JSON-RPC, over its size limit), and with the
// connection the session and its files would go. The guard reads the
// lines first: a line that is not valid UTF-8, not JSON, not a JSON-RPC
// message, or longer than MaxMessage gets the JSON-RPC error the spec
// names (-32700 parse error, -32600 invalid request), with the request's
// id where it can be found, and never reaches the SDK. Every other line
// goes through unchanged.

// MaxMessage is the longest line (one JSON-RPC message) the server takes:
// room for write_file's largest file in base64.
const MaxMessage = 16 << 20

// JSON-RPC's error codes for what the guard refuses.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// GuardedTransport is the stdio transport with the guard in front: it
// reads messages from r and writes to w (the responses of the SDK and the
// guard's errors, a whole line at a time), and refuses lines over maxLine
// bytes (zero: MaxMessage).
func GuardedTransport(r io.Reader, w io.Writer, maxLine int) mcp.Transport {
	if maxLine <= 0 {
		maxLine = MaxMessage
	}
	pr, pw := io.Pipe()
	out := &lineWriter{w: w}
	g := &guard{in: bufio.NewReaderSize(r, 64<<10), pass: pw, out: out, max: maxLine}
	go g.run()
	// The SDK's own limit stays above the guard's, as a second bound.
	return &mcp.IOTransport{Reader: pr, Writer: out, MaxLineLength: maxLine + 16}
}

// lineWriter serialises whole lines from the SDK and the guard.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close does nothing: stdout is the process's, not the connection's.
func (l *lineWriter) Close() error { return nil }

// guard copies good lines from in to pass and answers bad ones on out.
type guard struct {
	in   *bufio.Reader
	pass *io.PipeWriter
	out  io.Writer
	max  int
}

// run copies lines until in ends, then ends the SDK's input.
func (g *guard) run() {
	for {
		line, over, err := g.readLine()
		if len(line) > 0 || over > 0 {
			if bad := g.check(line, over); bad != nil {
				if _, werr := g.out.Write(bad); werr != nil {
					g.pass.CloseWithError(werr)
					return
				}
			} else if _, perr := g.pass.Write(append(line, '\n')); perr != nil {
				return // the SDK has stopped reading: the connection is over
			}
		}
		if err != nil {
			g.pass.CloseWithError(err) // io.EOF: a clean end
			return
		}
	}
}

// readLine returns the next line without its newline. A line over the
// limit is returned as its first and last kilobytes (where its id is)
// with over set to its length.
func (g *guard) readLine() (line []byte, over int, err error) {
	var buf []byte
	var tail []byte
	n := 0
	for {
		chunk, err := g.in.ReadSlice('\n')
		n += len(chunk)
		switch {
		case n <= g.max+1:
			buf = append(buf, chunk...)
		case over == 0:
			over = n
			buf = buf[:min(len(buf), 1<<10)]
			tail = lastBytes(append(tail, chunk...), 1<<10)
		default:
			tail = lastBytes(append(tail, chunk...), 1<<10)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if over > 0 {
			over = n
			return append(buf, tail...), over, err
		}
		return bytes.TrimRight(buf, "\r\n"), 0, err
	}
}

// lastBytes returns the last n bytes of b, in a fresh slice.
func lastBytes(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return append([]byte(nil), b[len(b)-n:]...)
}

// wireMessage is what the guard reads of a message to judge it.
type wireMessage struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
}

// check returns the error line for a bad message, or nil.
func (g *guard) check(line []byte, over int) []byte {
	switch {
	case over > 0:
		return errorLine(sniffID(line), codeInvalidRequest,
			fmt.Sprintf("the message is %d bytes, over the server's limit of %d: send large files in parts", over, g.max))
	case len(bytes.TrimSpace(line)) == 0:
		return nil
	case !utf8.Valid(line):
		return errorLine(sniffID(bytes.ToValidUTF8(line, []byte("\uFFFD"))), codeParseError, "parse error: the message is not valid UTF-8")
	case !json.Valid(line):
		return errorLine(sniffID(line), codeParseError, "parse error: the message is not JSON")
	}
	if bytes.HasPrefix(bytes.TrimSpace(line), []byte("[")) {
		// The SDK ends the connection on a batch under the protocol's
		// versions since 2025-06-18, which have none.
		return errorLine(nil, codeInvalidRequest, "invalid request: JSON-RPC batches are not supported; send each message on a line of its own")
	}
	return checkMessage(line)
}

// checkMessage judges one message as the SDK's decoder would, and
// returns the error line for one it would choke on.
func checkMessage(raw []byte) []byte {
	var m wireMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return errorLine(nil, codeInvalidRequest, "invalid request: a message is a JSON object")
	}
	id, idOK := validID(m.ID)
	var method string
	switch {
	case m.JSONRPC == nil || *m.JSONRPC != "2.0":
		return errorLine(id, codeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	case !idOK:
		return errorLine(nil, codeInvalidRequest, "invalid request: an id is a string or an integer")
	case m.Method != nil && json.Unmarshal(m.Method, &method) != nil:
		return errorLine(id, codeInvalidRequest, "invalid request: the method is a string")
	case m.Method == nil && id == nil:
		return errorLine(nil, codeInvalidRequest, "invalid request: neither a request (no method) nor a response (no id)")
	}
	return nil
}

// validID returns the message's id as it goes back in an error (nil when
// there is none), and whether it is one JSON-RPC allows.
func validID(raw json.RawMessage) (json.RawMessage, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	switch x := v.(type) {
	case string:
		return raw, true
	case float64:
		return raw, x == float64(int64(x))
	}
	return nil, false
}

// idPattern finds an "id" member in a message that cannot be decoded.
var idPattern = regexp.MustCompile(`"id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.){0,200}")\s*[,}]`)

// sniffID returns the id of a message that cannot be decoded, if it can
// be found: at its start (Go's SDK writes it there) or at its end (the
// TypeScript SDK's).
func sniffID(line []byte) json.RawMessage {
	all := idPattern.FindAllSubmatch(line, -1)
	if len(all) == 0 {
		return nil
	}
	for _, m := range [][][]byte{all[0], all[len(all)-1]} {
		if id, ok := validID(m[1]); ok && id != nil {
			return id
		}
	}
	return nil
}

// errorLine is a JSON-RPC error response, one line.
func errorLine(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return append(b, '\n')
}
