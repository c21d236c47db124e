package sandbox

import (
	"errors"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestPresetsAreValidAndCumulative(t *testing.T) {
	for n := range Levels {
		p, err := Preset(n)
		assert.NilError(t, err)
		assert.NilError(t, p.Validate(), "L%d", n)
		assert.Check(t, is.Equal(p.Level, n))
		assert.Check(t, is.Equal(p.Watchdog, 4*time.Second), "every level keeps the watchdog")
		assert.Check(t, is.Equal(p.Limits.Wall > 0, n >= 1), "L%d wall clock", n)
		assert.Check(t, is.Equal(p.Workspace.ScrubEnv, n >= 2), "L%d scrubbed environment", n)
		assert.Check(t, is.Equal(p.Processes.Namespace, n >= 3), "L%d PID namespace", n)
		assert.Check(t, is.Equal(p.Network.Isolate, n >= 4), "L%d network namespace", n)
		assert.Check(t, is.Equal(p.Filesystem.DropCapabilities, n >= 5), "L%d capabilities", n)
		assert.Check(t, is.Equal(p.Hardened.SyscallFilter, n >= 6), "L%d system-call filter", n)
		assert.Check(t, is.Equal(p.Hardened.Landlock, n >= 6), "L%d Landlock", n)
		assert.Check(t, is.Equal(p.Hardened.Cgroup.on(), n >= 6), "L%d control group", n)
	}
	l1 := MustPreset(1).Limits
	assert.Check(t, is.DeepEqual(l1, Limits{Wall: 1500 * time.Millisecond, CPU: 2 * time.Second, CPUHard: 3 * time.Second,
		AddressSpace: 256 << 20, FileSize: 10 << 20, OpenFiles: 64, OutputChars: 8000, OutputHeld: 8 << 20, KillTree: true, Sweep: true}))
	assert.Check(t, is.Equal(MustPreset(3).Processes.Max, 16))
	assert.Check(t, is.Equal(MustPreset(3).Processes.Interval, 5*time.Millisecond))
	_, err := Preset(Levels)
	assert.Check(t, is.ErrorIs(err, ErrInvalidPolicy))
}

// TestValidateNamesTheField: every rule of Validate, broken on its own,
// is refused with an error that names the field at fault and says why;
// every named check is broken at least once.
func TestValidateNamesTheField(t *testing.T) {
	cases := []struct {
		check, field string
		edit         func(*Policy)
		says         string
	}{
		{"level", "Level", func(p *Policy) { p.Level = 7 }, "want 0 to 6, got 7"},
		{"level", "Level", func(p *Policy) { p.Level = -1 }, "got -1"},
		{"watchdog", "Watchdog", func(p *Policy) { p.Watchdog = -time.Second }, "must not be negative, got -1s"},
		{"limits", "Limits.Wall", func(p *Policy) { p.Limits.Wall = -time.Second }, "must not be negative, got -1s"},
		{"limits", "Limits.CPU", func(p *Policy) { p.Limits.CPU = -time.Second }, "must not be negative"},
		{"limits", "Limits.CPUHard", func(p *Policy) { p.Limits.CPUHard = -time.Second }, "must not be negative"},
		{"limits", "Limits.AddressSpace", func(p *Policy) { p.Limits.AddressSpace = -1 }, "must not be negative, got -1"},
		{"limits", "Limits.FileSize", func(p *Policy) { p.Limits.FileSize = -1 }, "must not be negative"},
		{"limits", "Limits.OpenFiles", func(p *Policy) { p.Limits.OpenFiles = -1 }, "must not be negative"},
		{"limits", "Limits.OutputChars", func(p *Policy) { p.Limits.OutputChars = -1 }, "must not be negative"},
		{"limits", "Limits.OutputHeld", func(p *Policy) { p.Limits.OutputHeld = -1 }, "must not be negative"},
		{"limits", "Limits.CPU", func(p *Policy) { p.Limits.CPU = 1500 * time.Millisecond }, "whole seconds (RLIMIT_CPU), got 1.5s"},
		{"limits", "Limits.CPUHard", func(p *Policy) { p.Limits.CPUHard = 2500 * time.Millisecond }, "whole seconds"},
		{"limits", "Limits.CPUHard", func(p *Policy) { p.Limits.CPUHard = p.Limits.CPU }, "must be above the soft limit 2s, got 2s"},
		{"limits", "Limits.CPUHard", func(p *Policy) { p.Limits.CPU = 0 }, "needs a soft one"},
		{"limits", "Limits.OutputChars", func(p *Policy) { p.Limits.OutputChars = 100 }, "no room for head, tail and marker"},
		{"limits", "Limits.OutputHeld", func(p *Policy) { p.Limits.OutputHeld = 1000 }, "over OutputHeld 1000"},
		{"processes", "Processes.Max", func(p *Policy) { p.Processes.Max = -1 }, "must not be negative"},
		{"processes", "Processes.Interval", func(p *Policy) { p.Processes.Interval = -time.Millisecond }, "must not be negative, got -1ms"},
		{"processes", "Processes.Interval", func(p *Policy) { p.Processes.Interval = 0 }, "needs a monitor interval"},
		{"network", "Network.Isolate", func(p *Policy) { p.Network = Network{Allow: []string{"example.com:443"}} }, "needs the network namespace"},
		{"network", "Network.Credentials", func(p *Policy) {
			p.Workspace.ScrubEnv = false
			p.Network.Allow = []string{"api.example.com:80"}
			p.Network.Credentials = []Credential{{Destination: "api.example.com:80", Header: "X-Key", Value: "v"}}
		}, "scrubbed environment"},
		{"network", "Network.Allow", func(p *Policy) { p.Network.Allow = []string{"*.com:443"} }, "top-level domain"},
		{"network", "Network.Deny", func(p *Policy) { p.Network.Allow, p.Network.Deny = []string{"example.com:443"}, []string{"*"} }, "deny"},
		{"network", "Network.Resolve", func(p *Policy) {
			p.Network.Allow, p.Network.Resolve = []string{"example.com:443"}, map[string]string{"example.com": "nowhere"}
		}, "not an IP address"},
		{"network", "Network.Credentials", func(p *Policy) {
			p.Network.Allow = []string{"api.example.com:80"}
			p.Network.Credentials = []Credential{{Destination: "other.example.com:80", Header: "X-Key", Value: "v"}}
		}, "would never be sent"},
		{"filesystem", "Filesystem.Hide[0]", func(p *Policy) { p.Filesystem.Hide = []string{"/"} }, "want an absolute path other than /"},
		{"filesystem", "Filesystem.Hide[1]", func(p *Policy) { p.Filesystem.Hide = []string{"/root", "home"} }, `got "home"`},
		{"filesystem", "Filesystem.Private[0]", func(p *Policy) { p.Filesystem.Private = []string{"tmp"} }, `got "tmp"`},
		{"hardened", "Hardened.Cgroup.Memory", func(p *Policy) { p.Hardened.Cgroup.Memory = -1 }, "must not be negative"},
		{"hardened", "Hardened.Cgroup.Pids", func(p *Policy) { p.Hardened.Cgroup.Pids = -1 }, "must not be negative"},
		{"hardened", "Hardened.LandlockABI", func(p *Policy) { p.Hardened.LandlockABI = -1 }, "must not be negative"},
		{"hardened", "Hardened.Cgroup.CPUWeight", func(p *Policy) { p.Hardened.Cgroup.CPUWeight = 10001 }, "want 1 to 10000 (0: none), got 10001"},
		{"hardened", "Hardened.NoNewPrivs", func(p *Policy) {
			p.Filesystem.DropCapabilities, p.Hardened.NoNewPrivs = false, false
		}, "need no_new_privs"},
	}
	broken := map[string]bool{}
	for _, c := range cases {
		t.Run(c.field+"/"+c.says, func(t *testing.T) {
			p := MustPreset(6)
			p.Network.Isolate = true
			c.edit(&p)
			err := p.Validate()
			assert.Check(t, is.ErrorIs(err, ErrInvalidPolicy))
			var pe *PolicyError
			if assert.Check(t, errors.As(err, &pe), "%v", err) {
				assert.Check(t, is.Equal(pe.Field, c.field))
			}
			assert.Check(t, is.ErrorContains(err, "invalid policy: "+c.field+": "))
			assert.Check(t, is.ErrorContains(err, c.says))
			_, err = NewSession(Options{Policy: p})
			assert.Check(t, is.ErrorIs(err, ErrInvalidPolicy), "a session refuses an invalid policy")
		})
		broken[c.check] = true
	}
	for _, c := range policyChecks {
		assert.Check(t, broken[c.name], "no case breaks the %s check", c.name)
	}
	assert.Check(t, is.Error(func() error { p := MustPreset(1); p.Limits.Wall = -time.Second; return p.Validate() }(),
		"invalid policy: Limits.Wall: must not be negative, got -1s"))
}

func TestSoftOnlyCPULimitIsAllowed(t *testing.T) {
	// Only to show the quirk: the soft limit alone does nothing to PID 1.
	p := MustPreset(3)
	p.Limits.CPUHard = 0
	assert.NilError(t, p.Validate())
}
