package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/icmd"
)

// TestSessionFromTheShell drives a session as a reviewer would: make it,
// put a file in, let two runs share it, read and list through the file
// API, watch it refuse a link the program made, and remove it.
func TestSessionFromTheShell(t *testing.T) {
	res := run(t, nil, "session", "new")
	res.Assert(t, icmd.Success)
	dir := strings.TrimSpace(res.Stdout())
	defer os.Remove(dir + ".owner")
	defer os.RemoveAll(dir)

	in := filepath.Join(t.TempDir(), "in.txt")
	assert.NilError(t, os.WriteFile(in, []byte("41\n"), 0o644))
	run(t, nil, "files", "--session", dir, "put", "data/in.txt", in).Assert(t, icmd.Success)
	run(t, nil, "run", "--session", dir, "--", "/usr/bin/python3", "-c",
		"import os\nn = int(open('data/in.txt').read()) + 1\nopen('out.txt', 'w').write(str(n))\nos.symlink('/etc/passwd', 'leak')").Assert(t, icmd.Success)
	run(t, nil, "run", "--session", dir, "--", "/usr/bin/python3", "-c", "print(open('out.txt').read())").
		Assert(t, icmd.Expected{Out: "42"})
	run(t, nil, "files", "--session", dir, "get", "out.txt").Assert(t, icmd.Expected{Out: "42"})
	ls := run(t, nil, "files", "--session", dir, "ls")
	ls.Assert(t, icmd.Success)
	for _, want := range []string{"data/in.txt", "out.txt", "link", "leak"} {
		assert.Check(t, is.Contains(ls.Stdout(), want))
	}
	run(t, nil, "files", "--session", dir, "get", "leak").Assert(t, icmd.Expected{ExitCode: 1, Err: "symbolic link"})
	run(t, nil, "files", "--session", dir, "get", "../../etc/passwd").Assert(t, icmd.Expected{ExitCode: 1, Err: "leaves the session directory"})
	run(t, nil, "files", "--session", dir, "rm", "leak").Assert(t, icmd.Success)
	run(t, nil, "files", "--session", "/tmp", "ls").Assert(t, icmd.Expected{ExitCode: 1, Err: "not a session directory"})

	run(t, nil, "session", "rm", dir).Assert(t, icmd.Success)
	_, err := os.Stat(dir)
	assert.Check(t, os.IsNotExist(err), "session rm left the directory")
}
