package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/icmd"

	"sandboxlab/sandbox/evidence"
)

// TestRunAllow: --allow, --resolve and --credential reach the proxy; the
// log is printed after the output, one line a request, and is the JSON's
// network field; the credential's value, read from the environment, is
// nowhere in either.
func TestRunAllow(t *testing.T) {
	d, err := evidence.StartDestination(0, false)
	assert.NilError(t, err)
	defer d.Close()
	dest := fmt.Sprintf("api.test:%d", d.Port())
	prog := fmt.Sprintf(`
import urllib.request
for url in ("http://%s/", "http://other.test/"):
    try:
        print(urllib.request.urlopen(url, timeout=5).read().decode().strip())
    except Exception as e:
        print(e)
`, dest)
	env := []string{"CLI_TEST_KEY=sk-cli-test-secret"}
	args := []string{"run", "--level", "4", "--allow", dest, "--resolve", "api.test=" + d.IP(),
		"--credential", dest + "=X-Api-Key:CLI_TEST_KEY"}
	res := run(t, env, append(args, "--", "/usr/bin/python3", "-c", prog)...)
	res.Assert(t, icmd.Success)
	assert.Check(t, is.Contains(res.Stdout(), d.Token()))
	assert.Check(t, is.Contains(res.Stdout(), "HTTP Error 403"))
	assert.Check(t, is.Contains(res.Stderr(), "sandboxlab: network: "))
	assert.Check(t, is.Contains(res.Stderr(), "GET "+dest+" allowed (allow "+dest+") status 200"))
	assert.Check(t, is.Contains(res.Stderr(), "X-Api-Key added"))
	assert.Check(t, is.Contains(res.Stderr(), "GET other.test:80 refused (no allow rule matches)"))

	res = run(t, env, append(append(args, "--json"), "--", "/usr/bin/python3", "-c", prog)...)
	res.Assert(t, icmd.Success)
	var out struct {
		Network []struct {
			Host, Rule, Credential string
			Allowed                bool
		}
	}
	assert.NilError(t, json.Unmarshal([]byte(res.Stdout()), &out))
	assert.Check(t, is.Len(out.Network, 2))
	for _, s := range []string{res.Stdout(), res.Stderr()} {
		assert.Check(t, !strings.Contains(s, "sk-cli-test-secret"))
	}
	assert.Check(t, d.Contains("sk-cli-test-secret"), "the credential reached its destination")
}

// TestRunAllowRefusals: what --allow cannot do is a usage error, said
// before anything runs.
func TestRunAllowRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"--level", "3", "--allow", "a.test:80"}, "needs the network namespace"},
		{[]string{"--allow", "*.com:443"}, "whole top-level domain"},
		{[]string{"--allow", "a.test"}, "want host:port"},
		{[]string{"--allow", "a.test:80", "--resolve", "a.test"}, "want NAME=ADDR"},
		{[]string{"--allow", "a.test:80", "--credential", "a.test:80=X-Key:CLI_TEST_UNSET"}, "CLI_TEST_UNSET is empty or not set"},
		{[]string{"--allow", "a.test:80", "--credential", "a.test:80"}, "want DEST=HEADER:VAR"},
	} {
		res := run(t, nil, append(append([]string{"run"}, tc.args...), "--", "/bin/true")...)
		res.Assert(t, icmd.Expected{ExitCode: 1, Err: tc.err})
	}
}
