package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/icmd"

	"sandboxlab/report"
)

// TestAttackSandboxes: --sandbox runs the attacks side by side under
// sandboxlab's level and a custom prefix (env: no sandbox at all), and
// writes the attack × sandbox matrix; --profiles adds a profile.
func TestAttackSandboxes(t *testing.T) {
	profiles := filepath.Join(t.TempDir(), "mine.yaml")
	assert.NilError(t, os.WriteFile(profiles, []byte("version: 1\nprofiles:\n  - name: bare\n    about: no sandbox\n    command: [env]\n"), 0o644))
	res := run(t, nil, "attack", "--only", "env_secrets", "--format", "json", "--profiles", profiles,
		"--sandbox", "sandboxlab:L2", "--sandbox", "custom:env", "--sandbox", "bare")
	res.Assert(t, icmd.Success)
	var rep report.Sandboxes
	assert.NilError(t, json.Unmarshal([]byte(res.Stdout()), &rep))
	assert.Assert(t, is.Len(rep.Sandboxes, 3))
	assert.DeepEqual(t, []string{rep.Sandboxes[0].Name, rep.Sandboxes[1].Name, rep.Sandboxes[2].Name}, []string{"sandboxlab:L2", "custom", "bare"})
	for _, want := range []struct {
		sandbox string
		state   report.CellState
	}{{"sandboxlab:L2", report.Stopped}, {"custom", report.Escaped}, {"bare", report.Escaped}} {
		c, ok := rep.Cell("env_secrets", want.sandbox)
		assert.Check(t, ok, want.sandbox)
		assert.Check(t, is.Equal(c.State, want.state), "%s: %s", want.sandbox, c.Evidence)
	}
}

func TestAttackSandboxUsage(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	assert.NilError(t, os.WriteFile(bad, []byte("version: 1\nprofiles:\n  - name: x\n    cmd: [env]\n"), 0o644))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sandbox", "docker"}, `--sandbox: unknown sandbox "docker"`},
		{[]string{"--sandbox", "sandboxlab:L2", "--levels", "2"}, "--levels and --sandbox"},
		{[]string{"--sandbox", "sandboxlab:L2", "--sandbox", "sandboxlab:L2"}, "sandboxlab:L2 is named twice"},
		{[]string{"--profiles", bad, "--sandbox", "x"}, "line 4: field cmd not found"},
		{[]string{"--profiles", bad}, "--profiles: name the sandboxes"},
	} {
		res := run(t, nil, append([]string{"attack"}, tc.args...)...)
		res.Assert(t, icmd.Expected{ExitCode: 1})
		assert.Check(t, is.Contains(res.Stderr(), tc.want), "%v", tc.args)
	}
}
