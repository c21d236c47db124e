package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/icmd"

	"sandboxlab/sandbox/procfs"
)

// TestRunTimesOutAtL5: the example. The busy loop is reported as
// timed out at about 1.5 s, and nothing of it is left running.
func TestRunTimesOutAtL5(t *testing.T) {
	tag := procfs.Tag()
	res := run(t, nil, "run", "--level", "5", "--json", "--", "/usr/bin/python3", "-c", "while True: pass", tag)
	res.Assert(t, icmd.Success)
	var r struct {
		TimedOut bool   `json:"timed_out"`
		Reason   string `json:"reason"`
		WallMS   int64  `json:"wall_ms"`
		ExitCode int    `json:"exit_code"`
		Level    int    `json:"level"`
	}
	assert.NilError(t, json.Unmarshal([]byte(res.Stdout()), &r))
	assert.Check(t, r.TimedOut)
	assert.Check(t, is.Equal(r.Reason, "timeout"))
	assert.Check(t, r.WallMS >= 1500 && r.WallMS < 2500, "wall %d ms", r.WallMS)
	assert.Check(t, is.Equal(r.Level, 5))
	assert.Check(t, is.Len(procfs.WithArg(tag), 0), "the loop is still running")
}

// TestRunExitStatus: without --json, run exits as the program did, or as
// shells do when it could not start.
func TestRunExitStatus(t *testing.T) {
	run(t, nil, "run", "--level", "5", "--", "/usr/bin/python3", "-c", "print('hi'); raise SystemExit(3)").
		Assert(t, icmd.Expected{ExitCode: 3, Out: "hi\n", Err: "L5 exited (status 3)"})
	run(t, nil, "run", "--level", "1", "--", "/usr/bin/python3", "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)").
		Assert(t, icmd.Expected{ExitCode: 128 + 15, Err: "SIGTERM"})
	run(t, nil, "run", "--", "/no/such/program").Assert(t, icmd.Expected{ExitCode: 127})

	dir, err := os.MkdirTemp("", "sandboxlab-run-test-") // reachable by the program's uid
	assert.NilError(t, err)
	defer os.RemoveAll(dir)
	assert.NilError(t, os.Chmod(dir, 0o755))
	script := filepath.Join(dir, "script")
	assert.NilError(t, os.WriteFile(script, []byte("#!/no/such/interpreter\n"), 0o755))
	run(t, nil, "run", "--level", "3", "--", script).Assert(t, icmd.Expected{ExitCode: 127, Err: "no such file or directory"})
	run(t, nil, "run", "--level", "9", "--", "/bin/true").Assert(t, icmd.Expected{ExitCode: 1, Err: "level 9"})
	run(t, nil, "run").Assert(t, icmd.Expected{ExitCode: 1, Err: "no command given"})
}
