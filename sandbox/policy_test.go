package sandbox

import (
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

func TestValidateSaysWhatIsWrong(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Policy)
		says string
	}{
		{"negative", func(p *Policy) { p.Limits.Wall = -time.Second }, "must not be negative"},
		{"fractional CPU", func(p *Policy) { p.Limits.CPU = 1500 * time.Millisecond }, "whole seconds"},
		{"hard not above soft", func(p *Policy) { p.Limits.CPUHard = p.Limits.CPU }, "must be above the soft limit"},
		{"hard without soft", func(p *Policy) { p.Limits.CPU = 0 }, "needs a soft one"},
		{"no room for the marker", func(p *Policy) { p.Limits.OutputChars = 100 }, "no room for head, tail and marker"},
		{"held too small", func(p *Policy) { p.Limits.OutputHeld = 1000 }, "over OutputHeld"},
		{"cap without monitor", func(p *Policy) { p.Processes.Interval = 0 }, "needs a monitor interval"},
		{"hide root", func(p *Policy) { p.Filesystem.Hide = []string{"/"} }, "want an absolute path other than /"},
		{"hide relative", func(p *Policy) { p.Filesystem.Hide = []string{"home"} }, `hidden path "home"`},
		{"level", func(p *Policy) { p.Level = 7 }, "level 7"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := MustPreset(5)
			c.edit(&p)
			err := p.Validate()
			assert.Check(t, is.ErrorIs(err, ErrInvalidPolicy))
			assert.Check(t, is.ErrorContains(err, c.says))
			_, err = NewSession(Options{Policy: p})
			assert.Check(t, is.ErrorIs(err, ErrInvalidPolicy), "a session refuses an invalid policy")
		})
	}
}

func TestSoftOnlyCPULimitIsAllowed(t *testing.T) {
	// Only to show the quirk: the soft limit alone does nothing to PID 1.
	p := MustPreset(3)
	p.Limits.CPUHard = 0
	assert.NilError(t, p.Validate())
}
