package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's stdio transport ends the connection at the first line it
// cannot decode (not JSON, not JSON-RPC, over its size limit), and with the
// connection the session and its files would go. The guard reads the
// lines first: a line that is not valid UTF-8, not JSON, not a JSON-RPC
// message, or longer than MaxMessage gets the JSON-RPC error the spec
// names (-32700 parse error, -32600 invalid request), with the request's
// id where it can be found, and never reaches the SDK; so does one the
// SDK's decoder refuses. Every other line reaches the SDK as the message
// it decoded to.
//
// The guard also keeps the requests in flight, by id, until their
// responses are written. A request whose id is in flight gets an error:
// the SDK would drop it, and its client would wait forever. And when the
// client closes its input, the requests it had sent are answered before
// the connection ends, unless the client is gone (the read end of the
// output is closed): then nobody would read the answers, and the runs
// stop at once.

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
//
// It is a connection of its own, not the SDK's IOTransport behind a pipe:
// the guard has read and checked each line already, so it decodes the
// message once and hands it over. The SDK's reader would copy the line
// through a second goroutine and decode it twice more, into a fresh
// 32 KiB buffer each time.
func GuardedTransport(r io.Reader, w io.Writer, maxLine int) mcp.Transport {
	if maxLine <= 0 {
		maxLine = MaxMessage
	}
	return &guardedTransport{r: r, w: w, max: maxLine}
}

type guardedTransport struct {
	r   io.Reader
	w   io.Writer
	max int
}

// Connect starts the guard's reader; there is one connection.
func (t *guardedTransport) Connect(context.Context) (mcp.Connection, error) {
	incoming := make(chan readResult)
	fl := &inFlight{ids: map[string]bool{}, changed: make(chan struct{}, 1)}
	c := &guardedConn{out: &lineWriter{w: t.w}, incoming: incoming, closed: make(chan struct{}), inFlight: fl}
	g := &guard{in: bufio.NewReaderSize(t.r, 64<<10), out: c.out, max: t.max, incoming: incoming, closed: c.closed,
		inFlight: fl, readerGone: readerGone(t.w)}
	go g.run()
	return c, nil
}

// inFlight are the requests passed to the SDK and not yet answered.
type inFlight struct {
	mu      sync.Mutex
	ids     map[string]bool // by idKey
	changed chan struct{}   // a token after each answer
}

// idKey tells ids apart as JSON-RPC does: 1 and "1" are two.
func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

// add notes a request in flight; false when its id already is.
func (f *inFlight) add(id jsonrpc.ID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ids[idKey(id)] {
		return false
	}
	f.ids[idKey(id)] = true
	return true
}

func (f *inFlight) answered(id jsonrpc.ID) {
	f.mu.Lock()
	delete(f.ids, idKey(id))
	f.mu.Unlock()
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

func (f *inFlight) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.ids)
}

// readerGone returns a function that reports whether the reader of w is
// gone (a pipe whose read end is closed: poll says POLLERR), or nil when
// w is not a file it can ask.
func readerGone(w io.Writer) func() bool {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	fd := int(f.Fd())
	return func() bool {
		pfd := []unix.PollFd{{Fd: int32(fd)}}
		n, err := unix.Poll(pfd, 0)
		return err == nil && n > 0 && pfd[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
	}
}

// readResult is a message the guard passed, or the error that ended the
// input (io.EOF: the client closed it).
type readResult struct {
	msg jsonrpc.Message
	err error
}

// guardedConn is the SDK's side of the connection.
type guardedConn struct {
	out       *lineWriter
	incoming  <-chan readResult
	closeOnce sync.Once
	closed    chan struct{}
	inFlight  *inFlight
}

// Read returns the next message the guard passed. Like the SDK's own
// connection it returns as soon as ctx ends or the connection is closed,
// though the guard may still be blocked reading its input.
func (c *guardedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-c.incoming:
		return r.msg, r.err
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write writes msg as one line.
func (c *guardedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	_, err = c.out.Write(append(data, '\n'))
	if r, ok := msg.(*jsonrpc.Response); ok && r.ID.IsValid() {
		c.inFlight.answered(r.ID)
	}
	return err
}

// Close ends the connection. The input is the process's, not the
// connection's, and is not closed: a guard blocked reading it ends at
// its EOF, or with the process.
func (c *guardedConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID is empty: stdio has no sessions of its own.
func (c *guardedConn) SessionID() string { return "" }

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

// guard passes good lines from in to the connection, decoded, and
// answers bad ones on out.
type guard struct {
	in       *bufio.Reader
	out      io.Writer
	max      int
	incoming chan<- readResult
	closed   <-chan struct{}
	inFlight *inFlight
	// readerGone reports whether the output's reader is gone (nil: it
	// cannot be known).
	readerGone func() bool
}

// run reads lines until in ends, then ends the SDK's input.
func (g *guard) run() {
	for {
		line, over, err := g.readLine()
		if len(line) > 0 || over > 0 {
			msg, bad := g.check(line, over)
			if req, ok := msg.(*jsonrpc.Request); ok {
				switch {
				case req.IsCall() && !g.inFlight.add(req.ID):
					msg, bad = nil, errorLine(sniffID(line), codeInvalidRequest,
						"invalid request: a request with this id is still in progress: give each request an id of its own")
				case req.Method == "notifications/cancelled":
					// The protocol has no answer to a cancelled request.
					g.cancelled(req.Params)
				}
			}
			if bad != nil {
				if _, werr := g.out.Write(bad); werr != nil {
					g.pass(readResult{err: werr})
					return
				}
			} else if msg != nil && !g.pass(readResult{msg: msg}) {
				return // the connection is closed
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				g.drain()
			}
			g.pass(readResult{err: err}) // io.EOF: a clean end
			return
		}
	}
}

// cancelled takes the request a cancellation names out of flight.
func (g *guard) cancelled(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	if id, err := jsonrpc.MakeID(p.RequestID); err == nil && id.IsValid() {
		g.inFlight.answered(id)
	}
}

// drainPoll is how often, while the requests in flight are answered after
// the end of the input, the guard looks whether the client is gone.
const drainPoll = 50 * time.Millisecond

// drain waits, at the end of the input, until every request in flight
// has been answered, the client is gone, or the connection has closed.
func (g *guard) drain() {
	tick := time.NewTicker(drainPoll)
	defer tick.Stop()
	for g.inFlight.count() > 0 {
		if g.readerGone != nil && g.readerGone() {
			return
		}
		select {
		case <-g.inFlight.changed:
		case <-tick.C:
		case <-g.closed:
			return
		}
	}
}

// pass hands r to the connection's reader; false when the connection
// has closed.
func (g *guard) pass(r readResult) bool {
	select {
	case g.incoming <- r:
		return true
	case <-g.closed:
		return false
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

// check decodes a good line, or returns the error line for a bad one;
// neither for an empty line.
func (g *guard) check(line []byte, over int) (jsonrpc.Message, []byte) {
	switch {
	case over > 0:
		return nil, errorLine(sniffID(line), codeInvalidRequest,
			fmt.Sprintf("the message is %d bytes, over the server's limit of %d: send large files in parts", over, g.max))
	case len(bytes.TrimSpace(line)) == 0:
		return nil, nil
	case !utf8.Valid(line):
		return nil, errorLine(sniffID(bytes.ToValidUTF8(line, []byte("\uFFFD"))), codeParseError, "parse error: the message is not valid UTF-8")
	case !json.Valid(line):
		return nil, errorLine(sniffID(line), codeParseError, "parse error: the message is not JSON")
	}
	if bytes.HasPrefix(bytes.TrimSpace(line), []byte("[")) {
		// Batches went with the protocol's version 2025-06-18; the SDK
		// would end the connection on one under the versions since.
		return nil, errorLine(nil, codeInvalidRequest, "invalid request: JSON-RPC batches are not supported; send each message on a line of its own")
	}
	if bad := checkMessage(line); bad != nil {
		return nil, bad
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		// A message checkMessage let through but the SDK cannot take:
		// answered, where the SDK's own reader would end the connection.
		return nil, errorLine(sniffID(line), codeInvalidRequest, "invalid request: "+err.Error())
	}
	return msg, nil
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
