package mcpserver_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"sandboxlab/mcpserver"
	"sandboxlab/sandbox/evidence"
)

// tsClientDir holds the TypeScript client and its pinned SDK
// (package.json, package-lock.json); .ci/run installs it with npm ci.
const tsClientDir = "testdata/tsclient"

// tsScenarios are the lines the TypeScript client must print, each "ok".
var tsScenarios = []string{"list_tools", "older_protocol", "run_code", "state", "files", "timeout", "cancel", "network", "progress", "schema_check"}

// TestTypeScriptClient runs the official TypeScript SDK's client
// (testdata/tsclient/client.mjs, by node) against the built binary: the
// scenarios of the Go clients, each against a server of its own, with
// every structuredContent checked against its tool's outputSchema. It
// speaks the protocol of 2025-11-25, the Go client that of 2026-07-28.
func TestTypeScriptClient(t *testing.T) {
	node := tsNode(t)
	allowed, unlisted := destinations(t)
	cfg, err := json.Marshal(map[string]any{
		"bin": binary(t), "level": testLevel(), "root": newRoot(t), "python": evidence.Python,
		"allowed": allowed.String(), "allowedToken": allowed.Token(), "unlisted": unlisted.String(),
	})
	assert.NilError(t, err)
	runTSClient(t, node, cfg, tsScenarios)
	conns, _, _ := unlisted.Received()
	assert.Check(t, conns == 0, "the unlisted server was reached")
}

// TestTypeScriptClientOverHTTP runs the same client over Streamable HTTP,
// against servers in this process, one for each set of flags the
// scenarios ask for, with alice's bearer token; and the refusal of a
// request without one.
func TestTypeScriptClientOverHTTP(t *testing.T) {
	node := tsNode(t)
	allowed, unlisted := destinations(t)
	root, p := newRoot(t), newPrincipals("alice")
	servers := map[string]string{}
	for flags, s := range map[string]setup{
		"":              {},
		"--timeout 60s": {timeout: 60 * time.Second},
		"--timeout 10s": {timeout: 10 * time.Second},
		"--timeout 20s --allow " + allowed.String(): {timeout: 20 * time.Second, allow: []string{allowed.String()}},
	} {
		servers[flags] = serveHTTPIn(t, s, mcpserver.Limits{}, root, p).url
	}
	cfg, err := json.Marshal(map[string]any{
		"level": testLevel(), "root": root, "python": evidence.Python,
		"allowed": allowed.String(), "allowedToken": allowed.Token(), "unlisted": unlisted.String(),
		"http": map[string]any{"token": p["alice"], "servers": servers},
	})
	assert.NilError(t, err)
	runTSClient(t, node, cfg, append(slices.Clone(tsScenarios), "unauthorized"))
	conns, _, _ := unlisted.Received()
	assert.Check(t, conns == 0, "the unlisted server was reached")
}

// destinations starts the network scenario's two loopback servers, the
// allowed one and the unlisted one, closed at the end of the test.
func destinations(t *testing.T) (allowed, unlisted *evidence.Destination) {
	t.Helper()
	var err error
	allowed, err = evidence.StartDestination(0, false)
	assert.NilError(t, err)
	t.Cleanup(func() { allowed.Close() })
	unlisted, err = evidence.StartDestination(0, false)
	assert.NilError(t, err)
	t.Cleanup(func() { unlisted.Close() })
	return allowed, unlisted
}

// tsNode returns node, or skips the test where it or the client's modules
// are missing.
func tsNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("the TypeScript client needs node, which is not installed")
	}
	if _, err := os.Stat(filepath.Join(tsClientDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Skipf("the TypeScript client needs its modules: run 'npm ci' in mcpserver/%s (.ci/run does)", tsClientDir)
	}
	return node
}

// runTSClient runs client.mjs with cfg and holds each of scenarios to
// its "ok" line, and node to exit 0.
func runTSClient(t *testing.T, node string, cfg []byte, scenarios []string) {
	t.Helper()
	cmd := exec.Command(node, "client.mjs", string(cfg))
	cmd.Dir = tsClientDir
	out, err := cmd.CombinedOutput()
	t.Logf("node client.mjs:\n%s", out)
	results := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		verdict, rest, ok := strings.Cut(line, " - ")
		if !ok || (verdict != "ok" && verdict != "not ok") {
			continue
		}
		name, _, _ := strings.Cut(rest, ":")
		results[name] = verdict
	}
	for _, name := range scenarios {
		t.Run(name, func(t *testing.T) {
			if results[name] != "ok" {
				t.Errorf("the TypeScript client's %s: %q (see the output above)", name, results[name])
			}
		})
	}
	assert.Check(t, err, "node's exit")
}
