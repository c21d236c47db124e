package sandbox

import (
	"context"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestInitEnvNotPassedOn: the init starts with a GOMAXPROCS of its own
// ahead of the program's environment, and the program gets exactly the
// environment it was given, in order, its own GOMAXPROCS included.
func TestInitEnvNotPassedOn(t *testing.T) {
	root := testRoot(t)
	for _, env := range [][]string{
		{"A=1", "B=2"},
		{"A=1", "GOMAXPROCS=7", "B=2"},
	} {
		for _, n := range []int{1, 3} {
			p := MustPreset(n)
			p.Workspace.ScrubEnv = false // the environment is the one under test
			s, err := NewSession(Options{Policy: p, Root: root})
			assert.NilError(t, err)
			res, err := s.Run(context.Background(), Command{Path: "/usr/bin/env", Env: env})
			assert.NilError(t, err)
			assert.Check(t, is.Equal(res.Stdout, strings.Join(env, "\n")+"\n"), "L%d", n)
			assert.Check(t, s.Close())
		}
	}
}
