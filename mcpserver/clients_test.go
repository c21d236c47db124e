package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/poll"

	"sandboxlab/mcpserver"
	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
	"sandboxlab/sandbox/tool"
)

// What both of Go's transports must give a client (and, in
// tsclient_test.go, the TypeScript SDK's client over the binary): the
// tools listed with schemas and annotations, code run, state that
// persists through a file and not through a variable, a file written and
// read back, a timeout as an error result with the careful wording, a
// long run cancelled with nothing left running, an allowed loopback
// server reached and an unlisted one refused.

// setup is what a scenario asks of its server.
type setup struct {
	timeout time.Duration // the wall clock; 0: the level's
	allow   []string      // --allow
}

// policy is the policy the CLI makes of s's flags.
func (s setup) policy() sandbox.Policy {
	p := sandbox.MustPreset(testLevel())
	if s.timeout > 0 {
		p.Watchdog += s.timeout - p.Limits.Wall
		p.Limits.Wall = s.timeout
	}
	p.Network.Allow = s.allow
	return p
}

// flags are s as the CLI's flags.
func (s setup) flags() []string {
	args := []string{"--level", strconv.Itoa(testLevel())}
	if s.timeout > 0 {
		args = append(args, "--timeout", s.timeout.String())
	}
	for _, a := range s.allow {
		args = append(args, "--allow", a)
	}
	return args
}

// conn is a client connected to a fresh server.
type conn struct {
	cs        *mcp.ClientSession
	serverPID int // the process that makes the runs' control groups
	// sandbox is the handle every call names, over HTTP ("" over stdio,
	// where the connection is the sandbox).
	sandbox  string
	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
}

// args are a call's arguments, with the sandbox's handle over HTTP.
func (c *conn) args(m map[string]any) map[string]any {
	if c.sandbox == "" {
		return m
	}
	out := map[string]any{"sandbox": c.sandbox}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (c *conn) progressSeen() []*mcp.ProgressNotificationParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.progress)
}

// client is a Go SDK client that records progress notifications in c.
func (c *conn) client() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "go-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			c.mu.Lock()
			c.progress = append(c.progress, req.Params)
			c.mu.Unlock()
		}})
}

// dialer connects a client to a fresh server for s; at the end of the
// test it disconnects and checks that the server removed everything.
type dialer func(t *testing.T, s setup) *conn

// inMemory serves in this process, over the SDK's in-memory transports.
func inMemory(t *testing.T, s setup) *conn {
	root := newRoot(t)
	st, ct := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() {
		served <- mcpserver.Serve(context.Background(), mcpserver.Config{Policy: s.policy(), Root: root}, st)
	}()
	c := &conn{serverPID: os.Getpid()}
	type connected struct {
		cs  *mcp.ClientSession
		err error
	}
	done := make(chan connected, 1)
	go func() {
		cs, err := c.client().Connect(context.Background(), ct, nil)
		done <- connected{cs, err}
	}()
	var cs *mcp.ClientSession
	select {
	case r := <-done:
		assert.NilError(t, r.err)
		cs = r.cs
	case err := <-served: // it never read the client's first message
		t.Fatalf("the server ended before the client connected: %v", err)
	}
	c.cs = cs
	t.Cleanup(func() {
		assert.Check(t, cs.Close())
		select {
		case err := <-served:
			assert.Check(t, err)
		case <-time.After(30 * time.Second):
			t.Error("the server did not end after the client closed")
		}
		assert.Check(t, is.Len(groupsOf(c.serverPID), 0))
	})
	return c
}

// overBinary starts 'sandboxlab mcp' with s's flags, its sessions in a
// directory of the test's, over the SDK's CommandTransport.
func overBinary(t *testing.T, s setup) *conn {
	root := newRoot(t)
	cmd := exec.Command(binary(t), append([]string{"mcp"}, s.flags()...)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=" + root}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	c := &conn{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.client().Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	assert.NilError(t, err, stderr.String())
	c.cs, c.serverPID = cs, cmd.Process.Pid
	t.Cleanup(func() {
		assert.Check(t, cs.Close()) // closes its stdin and waits for it to exit
		assert.Check(t, cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 0, "the server's end: %v\n%s", cmd.ProcessState, stderr.String())
		assert.Check(t, is.Contains(stderr.String(), "removed"), "the server's log:\n%s", stderr.String())
		assert.Check(t, is.Len(groupsOf(c.serverPID), 0))
	})
	return c
}

func TestGoClientInMemory(t *testing.T) { runScenarios(t, inMemory) }

func TestGoClientOverBinary(t *testing.T) { runScenarios(t, overBinary) }

func runScenarios(t *testing.T, dial dialer) {
	for _, sc := range []struct {
		name string
		run  func(*testing.T, dialer)
	}{
		{"list_tools", scenarioListTools},
		{"run_code", scenarioRunCode},
		{"state", scenarioState},
		{"files", scenarioFiles},
		{"timeout", scenarioTimeout},
		{"cancel", scenarioCancel},
		{"network", scenarioNetwork},
		{"progress", scenarioProgress},
	} {
		t.Run(sc.name, func(t *testing.T) { sc.run(t, dial) })
	}
}

// call calls a tool and fails the test on a protocol error.
func call(t *testing.T, c *conn, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: c.args(args)})
	assert.NilError(t, err, "calling %s", name)
	return res
}

// text is a result's text blocks, joined.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// structured decodes a result's structuredContent into v.
func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	assert.NilError(t, err)
	assert.NilError(t, json.Unmarshal(b, v), string(b))
}

func scenarioListTools(t *testing.T, dial dialer) {
	c := dial(t, setup{})
	tools, err := c.cs.ListTools(context.Background(), nil)
	assert.NilError(t, err)
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		assert.Check(t, tl.InputSchema != nil && tl.OutputSchema != nil && tl.Annotations != nil, tl.Name)
		assert.Check(t, tl.Description != "", tl.Name)
		readOnly := tl.Name == "list_files" || tl.Name == "read_file"
		assert.Check(t, is.Equal(tl.Annotations.ReadOnlyHint, readOnly), tl.Name)
		assert.Check(t, tl.Annotations.OpenWorldHint != nil && !*tl.Annotations.OpenWorldHint, "%s: no network, a closed world", tl.Name)
	}
	slices.Sort(names)
	want := []string{"delete_file", "list_files", "read_file", "run_python", "run_shell", "write_file"}
	if c.sandbox != "" {
		want = []string{"close_sandbox", "create_sandbox", "delete_file", "list_files", "read_file", "run_python", "run_shell", "write_file"}
	}
	assert.DeepEqual(t, names, want)
	for _, tl := range tools.Tools {
		if c.sandbox != "" && tl.Name != "create_sandbox" {
			schema, err := json.Marshal(tl.InputSchema)
			assert.NilError(t, err)
			assert.Check(t, is.Contains(string(schema), `"required":["sandbox"`), "%s: the handle is a required argument: %s", tl.Name, schema)
		}
		if tl.Name == "run_python" {
			p := setup{}.policy()
			assert.Equal(t, tl.Description, tool.CarefulDescription(p, sandbox.DefaultQuota))
			assert.Check(t, is.Contains(tl.Description, "A run is stopped after 1.5 s of wall-clock time"))
		}
	}
}

func scenarioRunCode(t *testing.T, dial dialer) {
	c := dial(t, setup{})
	res := call(t, c, "run_python", map[string]any{"code": "print(6 * 7)"})
	assert.Check(t, !res.IsError, text(res))
	assert.Check(t, is.Contains(text(res), "\n| 42\n"))
	var st map[string]any
	structured(t, res, &st)
	assert.Check(t, is.Equal(st["status"], "ok"))
	assert.Check(t, is.Equal(st["reason"], "exited"))

	res = call(t, c, "run_shell", map[string]any{"command": "echo shell; exit 4"})
	assert.Check(t, res.IsError)
	assert.Check(t, is.Contains(text(res), "Error: the program failed with exit status 4"))
	assert.Check(t, is.Contains(text(res), "| shell\n"))
}

func scenarioState(t *testing.T, dial dialer) {
	c := dial(t, setup{})
	res := call(t, c, "run_python", map[string]any{"code": "x = 41 + 1\nopen('x.txt', 'w').write(str(x))"})
	assert.Check(t, !res.IsError, text(res))
	res = call(t, c, "run_python", map[string]any{"code": "print(int(open('x.txt').read()) * 2)"})
	assert.Check(t, is.Contains(text(res), "| 84\n"), "the file persists")
	res = call(t, c, "run_python", map[string]any{"code": "print(x)"})
	assert.Check(t, res.IsError, "the variable does not persist")
	assert.Check(t, is.Contains(text(res), "NameError: name 'x' is not defined"))
	assert.Check(t, is.Contains(text(res), "Error: the program failed with exit status 1. Its error output (stderr) below says why"))
}

func scenarioFiles(t *testing.T, dial dialer) {
	c := dial(t, setup{})
	binary := make([]byte, 256)
	for i := range binary {
		binary[i] = byte(i)
	}
	res := call(t, c, "write_file", map[string]any{"name": "in/data.bin", "content": base64.StdEncoding.EncodeToString(binary), "base64": true})
	assert.Check(t, !res.IsError, text(res))
	res = call(t, c, "write_file", map[string]any{"name": "notes.txt", "content": "héllo\nwörld\n"})
	assert.Check(t, !res.IsError, text(res))
	res = call(t, c, "run_shell", map[string]any{"command": "wc -c in/data.bin; tr a-z A-Z < notes.txt > upper.txt"})
	assert.Check(t, is.Contains(text(res), "| 256 in/data.bin\n"), text(res))

	var rf struct {
		Content, Encoding string
		Size, Offset      int64
		EOF               bool
	}
	res = call(t, c, "read_file", map[string]any{"name": "in/data.bin"})
	structured(t, res, &rf)
	assert.Check(t, is.Equal(rf.Encoding, "base64"))
	got, err := base64.StdEncoding.DecodeString(rf.Content)
	assert.NilError(t, err)
	assert.Check(t, bytes.Equal(got, binary), "the bytes came back")
	res = call(t, c, "read_file", map[string]any{"name": "upper.txt", "offset": 2, "length": 6})
	structured(t, res, &rf)
	assert.Check(t, is.Equal(rf.Encoding, "utf-8"))
	assert.Check(t, is.Equal(rf.Content, "LLO\nW"), "cut at characters, not bytes: %q", rf.Content)
	assert.Check(t, !rf.EOF)

	var lf struct{ Files []sandbox.FileInfo }
	structured(t, call(t, c, "list_files", nil), &lf)
	assert.Check(t, is.Len(lf.Files, 4), "%v", lf.Files)

	res = call(t, c, "read_file", map[string]any{"name": "../../etc/passwd"})
	assert.Check(t, res.IsError)
	assert.Check(t, is.Contains(text(res), "refused by the file API's name guard"))
	res = call(t, c, "delete_file", map[string]any{"name": "notes.txt"})
	assert.Check(t, !res.IsError, text(res))
}

func scenarioTimeout(t *testing.T, dial dialer) {
	c := dial(t, setup{})
	res := call(t, c, "run_python", map[string]any{"code": "import time\nprint('started', flush=True)\ntime.sleep(30)"})
	assert.Check(t, res.IsError)
	assert.Check(t, is.Contains(text(res), "Error: stopped at the time limit: the run took longer than 1.5 s (wall clock) and was killed"))
	var st tool.Status
	structured(t, res, &st)
	assert.Check(t, is.Equal(st.Reason, "timeout"))
	assert.Check(t, st.TimedOut)
}

// scenarioCancel starts a run with a child that would live five minutes,
// cancels the call once both are running, and finds neither left; the
// session goes on.
func scenarioCancel(t *testing.T, dial dialer) {
	c := dial(t, setup{timeout: 60 * time.Second})
	token := procfs.Tag()
	code := fmt.Sprintf("#%s\nimport subprocess, time\nsubprocess.Popen([%q, '-c', 'import time; time.sleep(300)', %q])\ntime.sleep(300)",
		token, evidence.Python, token)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_python", Arguments: c.args(map[string]any{"code": code})})
		done <- err
	}()
	alive := func() int { return len(procfs.WithArg(token)) + len(procfs.WithArgPrefix("#"+token)) }
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if n := alive(); n >= 2 {
			return poll.Success()
		}
		return poll.Continue("waiting for the program and its child")
	}, poll.WithTimeout(30*time.Second), poll.WithDelay(20*time.Millisecond))
	cancel()
	assert.Check(t, is.ErrorIs(<-done, context.Canceled))
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if n := alive(); n > 0 {
			return poll.Continue("%d processes of the cancelled run are alive", n)
		}
		return poll.Success()
	}, poll.WithTimeout(10*time.Second), poll.WithDelay(20*time.Millisecond))
	res := call(t, c, "run_python", map[string]any{"code": "print('after')"})
	assert.Check(t, is.Contains(text(res), "| after\n"), "the session goes on: %s", text(res))
}

func scenarioNetwork(t *testing.T, dial dialer) {
	allowed, err := evidence.StartDestination(0, false)
	assert.NilError(t, err)
	defer allowed.Close()
	unlisted, err := evidence.StartDestination(0, false)
	assert.NilError(t, err)
	defer unlisted.Close()
	c := dial(t, setup{timeout: 20 * time.Second, allow: []string{allowed.String()}})
	code := fmt.Sprintf(`
import urllib.request
for url in ("http://%s/", "http://%s/"):
    try:
        print(url, urllib.request.urlopen(url, timeout=10).read().decode())
    except Exception as e:
        print(url, "failed:", e)
`, allowed, unlisted)
	res := call(t, c, "run_python", map[string]any{"code": code})
	out := text(res)
	assert.Check(t, is.Contains(out, fmt.Sprintf("| http://%s/ %s", allowed, allowed.Token())), out)
	assert.Check(t, is.Contains(out, fmt.Sprintf("| http://%s/ failed: HTTP Error 403", unlisted)), out)
	assert.Check(t, is.Contains(out, "refused by the allowlist"), out)
	conns, _, _ := unlisted.Received()
	assert.Check(t, is.Equal(conns, 0), "the unlisted server was never reached")
	var st tool.Status
	structured(t, res, &st)
	assert.Check(t, is.Len(st.Network, 2))
}

// scenarioProgress: a client that asks for progress gets notifications
// while the run goes, counting up to the time limit.
func scenarioProgress(t *testing.T, dial dialer) {
	c := dial(t, setup{timeout: 10 * time.Second})
	params := &mcp.CallToolParams{Name: "run_python", Arguments: c.args(map[string]any{"code": "import time; time.sleep(1.3)"})}
	params.SetProgressToken("p1")
	res, err := c.cs.CallTool(context.Background(), params)
	assert.NilError(t, err)
	assert.Check(t, !res.IsError, text(res))
	seen := c.progressSeen()
	assert.Assert(t, len(seen) >= 1, "no progress notification")
	for i, p := range seen {
		assert.Check(t, is.Equal(p.ProgressToken, "p1"))
		assert.Check(t, is.Equal(p.Total, 10.0))
		assert.Check(t, is.Contains(p.Message, " s of at most 10 s"))
		if i > 0 {
			assert.Check(t, p.Progress > seen[i-1].Progress, "progress increases")
		}
	}
}
