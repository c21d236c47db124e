package mcpserver_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestManyClientsAtOnce is issue 30's test over MCP: 30 clients, each
// with a server process of its own, call at once: 10 run busy loops and 20
// a short program. The servers' runs queue for the host's slots before
// their clocks start, so every short program returns its output; the
// loops are stopped at the time limit, starved or not. Every server then
// removes what it made (overBinary's clean-up checks).
func TestManyClientsAtOnce(t *testing.T) {
	const loops, shorts = 10, 20
	// Dialled one by one: overBinary asserts, and a failed assertion may
	// stop only the test's own goroutine.
	conns := make([]*conn, loops+shorts)
	for i := range conns {
		conns[i] = overBinary(t, setup{})
	}
	start := time.Now()
	replies := make([]string, len(conns))
	errs := make([]bool, len(conns))
	failed := make([]error, len(conns))
	retried := make([]bool, len(conns))
	var calls sync.WaitGroup
	for i, c := range conns {
		code := "print(sum(range(1000)))"
		if i < loops {
			code = "while True: pass"
		}
		calls.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			// A run stopped starved says "the machine was busy ... the same
			// call again", and an agent does that once: so does the test.
			// An innocent program stopped without that word fails it.
			for try := 0; try < 2; try++ {
				res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_python", Arguments: map[string]any{"code": code}})
				if err != nil {
					failed[i] = err
					return
				}
				replies[i], errs[i] = text(res), res.IsError
				if i < loops || !strings.Contains(replies[i], "The machine was busy") {
					break
				}
				retried[i] = true
			}
		})
	}
	calls.Wait()
	for i := range conns {
		if !assert.Check(t, failed[i], "client %d", i) {
			continue
		}
		if i < loops {
			assert.Check(t, errs[i] && is.Contains(replies[i], "time limit")().Success(), "loop %d: %s", i, replies[i])
			continue
		}
		assert.Check(t, !errs[i], "short program %d: %s", i, replies[i])
		assert.Check(t, is.Contains(replies[i], "| 499500\n"), "short program %d", i)
	}
	t.Logf("%d clients at once: %v for their calls; %d short programs stopped starved and called again", len(conns), time.Since(start).Round(time.Millisecond), count(retried))
}

// count is how many of bs are true.
func count(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}
