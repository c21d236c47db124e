package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/mcpserver"
)

// rawConn speaks JSON-RPC lines to a server over the guarded transport.
type rawConn struct {
	t   *testing.T
	in  *io.PipeWriter
	out *bufio.Scanner
}

// send writes line and, unless it is a notification, returns the
// response (skipping the server's notifications).
func (c *rawConn) send(line string, wantReply bool) map[string]any {
	c.t.Helper()
	_, err := io.WriteString(c.in, line+"\n")
	assert.NilError(c.t, err)
	for wantReply && c.out.Scan() {
		var m map[string]any
		assert.NilError(c.t, json.Unmarshal(c.out.Bytes(), &m), c.out.Text())
		if _, isNote := m["method"]; !isNote {
			return m
		}
	}
	assert.NilError(c.t, c.out.Err())
	return nil
}

// serveRaw serves cfg over the guarded transport (maxLine: its line
// bound, 0 for the default) to a raw connection, and makes the
// handshake. Closing c.in ends the server; served gets what Serve
// returned.
func serveRaw(t *testing.T, cfg mcpserver.Config, maxLine int) (c *rawConn, served chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served = make(chan error, 1)
	go func() {
		served <- mcpserver.Serve(context.Background(), cfg, mcpserver.GuardedTransport(inR, outW, maxLine))
		outW.Close()
	}()
	out := bufio.NewScanner(outR)
	out.Buffer(nil, 4<<20)
	c = &rawConn{t: t, in: inW, out: out}
	init := c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, true)
	assert.Equal(t, errorCode(init), 0, "%v", init)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false)
	return c, served
}

// errorCode is a response's error code, 0 for a result.
func errorCode(m map[string]any) int {
	e, ok := m["error"].(map[string]any)
	if !ok {
		return 0
	}
	return int(e["code"].(float64))
}

// resultText is a tools/call result's text and isError.
func resultText(t *testing.T, m map[string]any) (string, bool) {
	t.Helper()
	r, ok := m["result"].(map[string]any)
	assert.Assert(t, ok, "no result: %v", m)
	var parts []string
	for _, c := range r["content"].([]any) {
		parts = append(parts, c.(map[string]any)["text"].(string))
	}
	isErr, _ := r["isError"].(bool)
	return strings.Join(parts, "\n"), isErr
}

func toolCall(id int, name string, args map[string]any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args}})
	return string(b)
}

// TestBadInput sends what a broken or hostile client might: lines that
// are not UTF-8, not JSON or not JSON-RPC, an oversized message, a
// batch, unknown tools and methods, arguments of the wrong type or too
// long for a program, and names that leave the session. Each gets the
// protocol or tool error the spec names, with its id where one can be
// found; the server stays up and the session keeps its files.
func TestBadInput(t *testing.T) {
	root := newRoot(t)
	const maxLine = 1 << 20
	c, served := serveRaw(t, mcpserver.Config{Policy: setup{}.policy(), Root: root}, maxLine)
	text, isErr := resultText(t, c.send(toolCall(2, "run_python", map[string]any{"code": "open('keep.txt', 'w').write('kept')"}), true))
	assert.Assert(t, !isErr, text)

	protocol := []struct {
		name, line string
		code       int
		id         any // float64 as JSON decodes it, or nil
	}{
		{"invalid UTF-8", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_python","arguments":{"code":"print('` + "\xff\xfe" + `')"}}}`, -32700, 3.0},
		{"not JSON", `{"jsonrpc":"2.0","id":4,"method":`, -32700, 4.0},
		{"not JSON, no id", `{"jsonrpc":`, -32700, nil},
		{"oversized, id at the end", `{"method":"tools/call","params":{"name":"run_python","arguments":{"code":"` + strings.Repeat("x", maxLine) + `"}},"jsonrpc":"2.0","id":5}`, -32600, 5.0},
		{"oversized, id first", `{"jsonrpc":"2.0","id":"six","method":"tools/call","params":{"name":"write_file","arguments":{"name":"a","content":"` + strings.Repeat("y", 2*maxLine) + `"}}}`, -32600, "six"},
		{"batch", `[{"jsonrpc":"2.0","id":7,"method":"ping"}]`, -32600, nil},
		{"JSON-RPC 1.0", `{"jsonrpc":"1.0","id":8,"method":"ping"}`, -32600, 8.0},
		{"fractional id", `{"jsonrpc":"2.0","id":9.5,"method":"ping"}`, -32600, nil},
		{"not an object", `42`, -32600, nil},
		{"error member not an object", `{"jsonrpc":"2.0","id":12,"method":"ping","error":5}`, -32600, 12.0},
		{"unknown tool", toolCall(10, "rm_rf", map[string]any{}), -32602, 10.0},
		{"unknown method", `{"jsonrpc":"2.0","id":11,"method":"tools/destroy"}`, -32601, 11.0},
	}
	for _, p := range protocol {
		m := c.send(p.line, true)
		assert.Check(t, is.Equal(errorCode(m), p.code), "%s: %v", p.name, m)
		assert.Check(t, is.DeepEqual(m["id"], p.id), "%s", p.name)
	}

	tools := []struct {
		name string
		args map[string]any
		tool string
		want string
	}{
		{"code too long for an argument", map[string]any{"code": strings.Repeat("#", 200<<10)}, "run_python", "over the 131071 bytes the kernel passes as one argument"},
		{"NUL in the command", map[string]any{"command": "echo a\x00b"}, "run_shell", "holds a NUL byte"},
		{"wrong type", map[string]any{"code": 5}, "run_python", "validating \"arguments\""},
		{"missing argument", map[string]any{}, "read_file", "give the file's name (or name_base64"},
		{"missing content", map[string]any{"name": "x"}, "write_file", "validating \"arguments\""},
		{"dot-dot", map[string]any{"name": "../../etc/passwd"}, "read_file", "refused by the file API's name guard"},
		{"absolute", map[string]any{"name": "/etc/passwd", "content": "x"}, "write_file", "refused by the file API's name guard"},
		{"a link the program made", map[string]any{"name": "link"}, "read_file", "refused by the file API's link guard"},
		{"a directory", map[string]any{"name": "dir"}, "read_file", "refused by the file API's type guard"},
		{"bad base64", map[string]any{"name": "b", "content": "!!", "base64": true}, "write_file", "not valid base64"},
		{"too long a read", map[string]any{"name": "keep.txt", "length": 1 << 20}, "read_file", "read in parts"},
		{"negative offset", map[string]any{"name": "keep.txt", "offset": -1}, "read_file", "must not be negative"},
	}
	c.send(toolCall(20, "run_shell", map[string]any{"command": "ln -s /etc/passwd link; mkdir dir"}), true)
	for i, tc := range tools {
		text, isErr := resultText(t, c.send(toolCall(30+i, tc.tool, tc.args), true))
		assert.Check(t, isErr, "%s: %s", tc.name, text)
		assert.Check(t, is.Contains(text, tc.want), tc.name)
	}

	text, isErr = resultText(t, c.send(toolCall(50, "run_python", map[string]any{"code": "print(open('keep.txt').read())"}), true))
	assert.Check(t, !isErr && strings.Contains(text, "| kept\n"), "the session kept its file: %s", text)
	assert.NilError(t, c.in.Close())
	select {
	case err := <-served:
		assert.Check(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not end at the end of its input")
	}
}

// TestKeptOutput: output the reply cuts is kept in the session, named in
// the reply, and read_file returns the part left out.
func TestKeptOutput(t *testing.T) {
	c := inMemory(t, setup{})
	res := call(t, c, "run_python", map[string]any{"code": "for i in range(40000): print(i)"})
	assert.Check(t, !res.IsError)
	out := text(res)
	assert.Check(t, is.Contains(out, "Note: stdout was cut: your code wrote 228890 bytes"))
	const name = "output/stdout-2.txt" // run 1 was the server's probe
	assert.Check(t, is.Contains(out, fmt.Sprintf("The whole stream is kept in the file %q (228890 bytes)", name)), lines(out, 3))
	assert.Check(t, !strings.Contains(out, "\n| 20000\n"), "the middle is not in the reply")
	var rf struct {
		Content string
		Offset  int64
	}
	structured(t, call(t, c, "read_file", map[string]any{"name": name, "offset": 108890, "length": 12}), &rf)
	assert.Check(t, is.Equal(rf.Content, "20000\n20001\n"))
}

// TestRequestsInFlight: a request that reuses the id of one still in
// progress gets an error, not silence; and the requests received before
// the client closes its input are all answered before the server ends.
func TestRequestsInFlight(t *testing.T) {
	root := newRoot(t)
	c, served := serveRaw(t, mcpserver.Config{Policy: setup{timeout: 10 * time.Second}.policy(), Root: root}, 0)

	// The responses, as they come: a request left unanswered shows as a
	// wait that ends at the test's bound, not as a hang.
	responses := make(chan map[string]any, 16)
	go func() {
		defer close(responses)
		for c.out.Scan() {
			var m map[string]any
			if json.Unmarshal(c.out.Bytes(), &m) != nil {
				continue
			}
			if _, isNote := m["method"]; !isNote {
				responses <- m
			}
		}
	}()
	readReplies := func(n int) []map[string]any {
		var got []map[string]any
		bound := time.After(30 * time.Second)
		for len(got) < n {
			select {
			case m, ok := <-responses:
				if !ok {
					return got
				}
				got = append(got, m)
			case <-bound:
				t.Errorf("%d of %d responses within 30 s", len(got), n)
				return got
			}
		}
		return got
	}
	c.send(toolCall(100, "run_python", map[string]any{"code": "import time; time.sleep(0.5); print('first')"}), false)
	c.send(toolCall(100, "list_files", map[string]any{}), false)
	replies := readReplies(2)
	assert.Assert(t, is.Len(replies, 2))
	assert.Check(t, is.Equal(errorCode(replies[0]), -32600), "the reused id: %v", replies[0])
	assert.Check(t, is.Equal(replies[0]["id"], 100.0))
	assert.Check(t, is.Contains(fmt.Sprint(replies[0]["error"]), "still in progress"))
	text, isErr := resultText(t, replies[1])
	assert.Check(t, !isErr && strings.Contains(text, "| first\n"), "the first request's answer: %s", text)

	c.send(toolCall(101, "run_python", map[string]any{"code": "import time; time.sleep(0.5); print('last run')"}), false)
	c.send(toolCall(102, "list_files", map[string]any{}), false)
	assert.NilError(t, c.in.Close())
	replies = readReplies(2)
	ids := map[float64]map[string]any{}
	for _, r := range replies {
		ids[r["id"].(float64)] = r
	}
	assert.Assert(t, ids[101] != nil && ids[102] != nil, "answered after the input closed: %v", replies)
	text, _ = resultText(t, ids[101])
	assert.Check(t, is.Contains(text, "| last run\n"), text)
	select {
	case err := <-served:
		assert.Check(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not end after answering")
	}
}
