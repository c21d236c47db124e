package main

import (
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/icmd"
)

// TestCommandFoundAsTheSandboxSeesIt: a version manager's shim first on
// the caller's PATH, in a directory the sandbox hides (the caller's home),
// is passed over for the python3 the sandbox's own PATH has; a name only
// the hidden directory has fails with both sides said, reason not_found.
func TestCommandFoundAsTheSandboxSeesIt(t *testing.T) {
	home, err := os.UserHomeDir()
	assert.NilError(t, err)
	shims, err := os.MkdirTemp(home, ".sandboxlab-test-shims-")
	assert.NilError(t, err)
	t.Cleanup(func() { os.RemoveAll(shims) })
	for _, name := range []string{"python3", "sandboxlab-shim-only"} {
		assert.NilError(t, os.WriteFile(filepath.Join(shims, name), []byte("#!/bin/sh\necho shim\n"), 0o755))
	}
	path := "PATH=" + shims + ":" + os.Getenv("PATH")

	res := run(t, []string{path}, "run", "--level", "5", "--", "python3", "-c", "print(1)")
	res.Assert(t, icmd.Expected{ExitCode: 0, Out: "1\n"})
	assert.Check(t, !is.Contains(res.Stdout(), "shim")().Success(), "the hidden shim ran")

	res = run(t, []string{path}, "run", "--level", "5", "--", "sandboxlab-shim-only")
	want := "sandboxlab-shim-only is " + filepath.Join(shims, "sandboxlab-shim-only") + " on the host, which this level hides"
	res.Assert(t, icmd.Expected{ExitCode: 127, Err: want})
	assert.Check(t, is.Contains(res.Stderr(), "inside, PATH is /usr/local/bin:/usr/bin:/bin and has no sandboxlab-shim-only"))

	res = run(t, []string{path}, "run", "--level", "5", "--json", "--", "sandboxlab-shim-only")
	assert.Check(t, is.Equal(res.ExitCode, 127))
	assert.Check(t, is.Contains(res.Stdout(), `"reason": "not_found"`))
	assert.Check(t, is.Contains(res.Stdout(), want))
}
