package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/mcpserver"
	"sandboxlab/sandbox"
	"sandboxlab/sandbox/tool"
)

// TestAgentTableViaMCP: the careful tool served over MCP and reached by
// the MCP client gives the notes' table, call for call: the server is the
// careful tool, not a new one. Each task gets a server, and so a session,
// of its own; none is left behind.
func TestAgentTableViaMCP(t *testing.T) {
	root, err := os.MkdirTemp("", "sandboxlab-agent-mcp-test-")
	assert.NilError(t, err)
	defer os.RemoveAll(root)
	assert.NilError(t, os.Chmod(root, 0o711))
	open := func(ctx context.Context) (tool.Tool, func() error, error) {
		st, ct := mcp.NewInMemoryTransports()
		served := make(chan error, 1)
		go func() {
			served <- mcpserver.Serve(context.Background(), mcpserver.Config{Policy: sandbox.MustPreset(Level), Root: root}, st)
		}()
		c, err := mcpserver.Connect(ctx, ct)
		if err != nil {
			return nil, nil, err
		}
		return c, func() error { c.Close(); return <-served }, nil
	}
	got, err := runTable(context.Background(), root, open)
	assert.NilError(t, err)
	assert.DeepEqual(t, got, notesTable())
	left, _ := filepath.Glob(filepath.Join(root, "*"))
	assert.Check(t, is.Len(left, 0), "sessions left behind: %v", left)
}
