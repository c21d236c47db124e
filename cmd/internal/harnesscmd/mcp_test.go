package harnesscmd

import (
	"bytes"
	"io"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/cmd/internal/cli"
)

// command is this package's command name.
func command(t *testing.T, name string) cli.Command {
	t.Helper()
	for _, c := range Commands() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no command %q in harnesscmd", name)
	return cli.Command{}
}

// mcpPolicy parses mcp's flags as the command does and returns its
// options, or the usage error.
func mcpPolicy(t *testing.T, args ...string) (*mcpOptions, error) {
	t.Helper()
	c := command(t, "mcp")
	o, _ := c.New()
	cl, err := c.Parse(c.FlagSet(o, io.Discard), args)
	assert.NilError(t, err)
	return o.(*mcpOptions), o.Validate(cl)
}

// TestMCPLimits: --timeout, --cpu, --memory and --quota raise the level's
// limits where the level has them, L6's memory in its control group.
func TestMCPLimits(t *testing.T) {
	o, err := mcpPolicy(t, "--timeout", "5m", "--cpu", "120s", "--memory", "1G", "--quota", "512M")
	assert.NilError(t, err)
	p := o.policy
	assert.Check(t, is.Equal(p.Level, 6))
	assert.Check(t, is.Equal(p.Limits.Wall, 5*time.Minute))
	assert.Check(t, is.Equal(p.TimeLimit(), 5*time.Minute), "the wall clock, not the watchdog, stops a run")
	assert.Check(t, p.Watchdog > p.Limits.Wall)
	assert.Check(t, is.Equal(p.Limits.CPU, 120*time.Second))
	assert.Check(t, is.Equal(p.Limits.CPUHard, 121*time.Second))
	assert.Check(t, is.Equal(p.Hardened.Cgroup.Memory, int64(1<<30)))
	assert.Check(t, is.Equal(p.Limits.AddressSpace, int64(0)))
	assert.Check(t, is.Equal(o.quotaBytes, int64(512<<20)))

	o, err = mcpPolicy(t, "--level", "5", "--memory", "768m")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(o.policy.Limits.AddressSpace, int64(768<<20)), "below L6 the address space")

	o, err = mcpPolicy(t, "--level", "0", "--timeout", "20s")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(o.policy.TimeLimit(), 20*time.Second), "at L0 the watchdog is the clock")
}

// TestMCPBadFlags: values the level cannot use or the machine cannot give
// are refused before anything runs, each with the flag and what it wants.
func TestMCPBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cpu", "1500ms"}, "--cpu 1.5s: want whole seconds"},
		{[]string{"--timeout", "10ms"}, "--timeout 10ms: want 100ms to 24h0m0s"},
		{[]string{"--timeout", "48h"}, "--timeout 48h0m0s: want 100ms to 24h0m0s"},
		{[]string{"--memory", "12x"}, `--memory "12x": want a size such as 512M or 2G`},
		{[]string{"--memory", "1M"}, "--memory 1M: want at least 32 MiB"},
		{[]string{"--memory", "100T"}, "--memory 100T: more than this machine has"},
		{[]string{"--quota", "-5M"}, `--quota "-5M": want a size`},
		{[]string{"--level", "0", "--cpu", "5s"}, "level 0 has no resource limits to raise"},
		{[]string{"--level", "7"}, "--level: invalid policy: level 7"},
		{[]string{"--level", "3", "--allow", "example.com:443"}, "network"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		_, err := mcpPolicy(t, c.args...)
		assert.Check(t, is.ErrorContains(err, c.want), "%v", c.args)
	}
	var out, errs bytes.Buffer
	assert.Equal(t, cli.Dispatch(t.Context(), cli.Harness, Commands(), []string{"mcp", "--cpu", "1.5s"}, &out, &errs), 1)
	assert.Check(t, is.Contains(errs.String(), "sandboxlab mcp: --cpu 1.5s: want whole seconds"))
}
