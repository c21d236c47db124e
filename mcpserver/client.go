package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sandboxlab/sandbox/tool"
)

// Client is the careful tool as an MCP client sees it: a tool.Tool whose
// description is run_python's, as the server lists it, and whose calls go
// to run_python over the connection. The scripted agent takes it as it
// takes the careful tool itself, which shows that the server is that tool.
type Client struct {
	session     *mcp.ClientSession
	description string
}

var _ tool.Tool = (*Client)(nil)

// Connect connects an MCP client over t (to a server started with Serve,
// or 'sandboxlab mcp' through a CommandTransport) and finds run_python.
// Close ends the connection, and with it the server's session.
func Connect(ctx context.Context, t mcp.Transport) (*Client, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "sandboxlab-client", Version: "1"}, nil)
	cs, err := c.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("connecting to the MCP server: %w", err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		cs.Close()
		return nil, fmt.Errorf("listing the MCP server's tools: %w", err)
	}
	for _, t := range tools.Tools {
		if t.Name == "run_python" {
			return &Client{session: cs, description: t.Description}, nil
		}
	}
	cs.Close()
	return nil, fmt.Errorf("the MCP server has no run_python tool")
}

// Spawn starts 'bin mcp args...' and connects to it over its stdin and
// stdout. What the server says on stderr is kept for the error, should it
// fail to start (a level the machine cannot give, say).
func Spawn(ctx context.Context, bin string, args ...string) (*Client, error) {
	cmd := exec.Command(bin, append([]string{"mcp"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	c, err := Connect(ctx, &mcp.CommandTransport{Command: cmd})
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return c, nil
}

// Opener returns a function that starts 'bin mcp args...' at each call
// and returns the careful tool over it, with what ends the connection (and
// so the server's session): the shape the scripted agent's RunVia takes.
func Opener(bin string, args ...string) func(context.Context) (tool.Tool, func() error, error) {
	return func(ctx context.Context) (tool.Tool, func() error, error) {
		c, err := Spawn(ctx, bin, args...)
		if err != nil {
			return nil, nil, err
		}
		return c, c.Close, nil
	}
}

// Name returns "careful": it is the careful tool, reached over MCP.
func (c *Client) Name() string { return "careful" }

// Description returns run_python's description as the server lists it.
func (c *Client) Description() string { return c.description }

// Session is the client's connection, for calls of the other tools.
func (c *Client) Session() *mcp.ClientSession { return c.session }

// Close ends the connection.
func (c *Client) Close() error { return c.session.Close() }

// Call calls run_python with code. The reply's text is the result's text;
// its status is the structuredContent. A protocol error is an error, as a
// sandbox that could not run the code is for the careful tool itself.
func (c *Client) Call(ctx context.Context, code string) (tool.Reply, error) {
	res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: "run_python", Arguments: map[string]any{"code": code}})
	if err != nil {
		return tool.Reply{}, fmt.Errorf("calling run_python: %w", err)
	}
	return ReplyOf(res)
}

// ReplyOf reads a run tool's result back into the careful tool's reply.
func ReplyOf(res *mcp.CallToolResult) (tool.Reply, error) {
	var text []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text = append(text, t.Text)
		}
	}
	r := tool.Reply{Text: strings.Join(text, "\n")}
	if res.StructuredContent == nil {
		return r, fmt.Errorf("the result has no structuredContent: %s", r.Text)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return r, err
	}
	r.Status = &tool.Status{}
	if err := json.Unmarshal(b, r.Status); err != nil {
		return r, fmt.Errorf("reading the result's structuredContent: %w", err)
	}
	if r.IsError() != res.IsError {
		return r, fmt.Errorf("isError is %v but the status is %q", res.IsError, r.Status.Status)
	}
	return r, nil
}
