package mcpserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/mcpserver"
	"sandboxlab/sandbox"
)

// TestWriteFileLosesNothing: a session filled with many small files has
// less room than their bytes say (its filesystem counts pages), so a
// write the quota's byte count admits can still fail. It fails whole,
// with an error that says why and what to do, and the old content is
// intact.
func TestWriteFileLosesNothing(t *testing.T) {
	if testLevel() < 6 {
		t.Skip("the session's own filesystem, which counts pages, is L6's: run as root")
	}
	root := newRoot(t)
	st, ct := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() {
		served <- mcpserver.Serve(context.Background(), mcpserver.Config{Policy: sandbox.MustPreset(6), Root: root, Quota: 4 << 20}, st)
	}()
	c := &conn{}
	cs, err := c.client().Connect(context.Background(), ct, nil)
	assert.NilError(t, err)
	c.cs = cs
	defer func() {
		assert.Check(t, cs.Close())
		select {
		case err := <-served:
			assert.Check(t, err)
		case <-time.After(30 * time.Second):
			t.Error("the server did not end")
		}
	}()
	res := call(t, c, "write_file", map[string]any{"name": "keep.txt", "content": "the old content\n"})
	assert.Assert(t, !res.IsError, text(res))
	res = call(t, c, "run_python", map[string]any{"code": "import os\nos.mkdir('fill')\nfor i in range(400):\n    open(f'fill/{i}', 'wb').write(b'x' * 4097)"})
	assert.Assert(t, !res.IsError, text(res))

	res = call(t, c, "write_file", map[string]any{"name": "keep.txt", "content": strings.Repeat("y", 2<<20)})
	assert.Check(t, res.IsError)
	assert.Check(t, is.Contains(text(res), `"keep.txt" was not written: the session's disk is full`), text(res))
	assert.Check(t, is.Contains(text(res), "delete_file"), text(res))
	var rf struct{ Content string }
	structured(t, call(t, c, "read_file", map[string]any{"name": "keep.txt"}), &rf)
	assert.Check(t, is.Equal(rf.Content, "the old content\n"), "the old content, whole")
}
