package checks

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"gotest.tools/v3/assert"

	"sandboxlab/sandbox"
)

var fileLinks = &Check{
	ID:      "file_links",
	Promise: "the file API follows no link the program made and reads only regular files",
	Level:   2,
	Body: func(t *T) {
		secretPath, secret := t.hostSecret()
		s := t.session(preset(2), 0)
		res := t.python(s, sandbox.Command{}, `
import os, sys
os.symlink(sys.argv[1], "report.txt")
os.symlink(os.path.dirname(sys.argv[1]), "d")
os.mkfifo("pipe")
`, secretPath)
		assert.Assert(t, res.ExitCode == 0, "the program could not plant its links: %s", res.Stderr)
		for _, name := range []string{"report.txt", "d/" + filepath.Base(secretPath)} {
			b, err := s.ReadFile(name)
			assert.Check(t, err != nil, "ReadFile(%q) followed the program's link", name)
			assert.Check(t, !strings.Contains(string(b), secret), "ReadFile(%q) handed back the host secret", name)
			err = s.WriteFile(name, []byte("planted"))
			assert.Check(t, err != nil, "WriteFile(%q) followed the program's link", name)
		}
		got, _ := os.ReadFile(secretPath)
		assert.Check(t, string(got) == secret, "a write through a link changed the host secret")

		// A FIFO is not a file: reading it must be refused, and quickly
		// (a blocking read would hang the host).
		done := make(chan error, 1)
		go func() {
			_, err := s.ReadFile("pipe")
			done <- err
		}()
		select {
		case err := <-done:
			assert.Check(t, err != nil, "ReadFile of a FIFO succeeded")
		case <-time.After(3 * time.Second):
			assert.Check(t, false, "ReadFile of a FIFO hung the host")
		}
		t.Evidence("links to a host secret and through a linked directory refused, FIFO refused")
	},
}
