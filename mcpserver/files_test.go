package mcpserver_test

import (
	"context"
	"encoding/base64"
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

// TestNamesThatAreNotUTF8: a file the program names with bytes that are
// not UTF-8 is listed with its name in base64, and every file tool
// takes that form, so that a client can name what it was shown.
func TestNamesThatAreNotUTF8(t *testing.T) {
	c := inMemory(t, setup{})
	res := call(t, c, "run_python", map[string]any{"code": "open(b'caf\\xe9.txt', 'wb').write(b'latin-1 named')"})
	assert.Assert(t, !res.IsError, text(res))
	var lf struct{ Files []sandbox.FileInfo }
	res = call(t, c, "list_files", nil)
	structured(t, res, &lf)
	assert.Assert(t, is.Len(lf.Files, 1))
	b64 := base64.StdEncoding.EncodeToString([]byte("caf\xe9.txt"))
	assert.Check(t, is.Equal(lf.Files[0].NameBase64, b64))
	assert.Check(t, is.Contains(text(res), "name it by name_base64 "+b64), text(res))

	var rf struct{ Content string }
	structured(t, call(t, c, "read_file", map[string]any{"name_base64": b64}), &rf)
	assert.Check(t, is.Equal(rf.Content, "latin-1 named"))
	res = call(t, c, "write_file", map[string]any{"name_base64": b64, "content": "rewritten"})
	assert.Check(t, !res.IsError, text(res))
	res = call(t, c, "read_file", map[string]any{"name": "x", "name_base64": b64})
	assert.Check(t, res.IsError && strings.Contains(text(res), "not both"), text(res))
	res = call(t, c, "delete_file", map[string]any{"name_base64": b64})
	assert.Check(t, !res.IsError, text(res))
	structured(t, call(t, c, "list_files", nil), &lf)
	assert.Check(t, is.Len(lf.Files, 0))
}
