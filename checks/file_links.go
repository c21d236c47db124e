package checks

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"sandboxlab/sandbox"
)

var fileLinks = &Check{
	ID:      "file_links",
	Promise: "the file API follows no link the program made and reads only regular files",
	Level:   2,
	Body: func(t *T) {
		secretPath, secret := t.hostSecret()
		s := t.session(Preset(2), 0)
		// The program plants its links in the session directory by name,
		// whatever its working directory (that is another layer's promise).
		res := t.python(s, sandbox.Command{}, `
import os, sys
secret, dir = sys.argv[1], sys.argv[2]
os.symlink(secret, os.path.join(dir, "report.txt"))
os.symlink(os.path.dirname(secret), os.path.join(dir, "d"))
os.mkfifo(os.path.join(dir, "pipe"))
`, secretPath, s.Dir())
		t.Assert(res.ExitCode == 0, "the program could not plant its links: %s", res.Stderr)
		for _, name := range []string{"report.txt", "d", "pipe"} {
			_, err := os.Lstat(filepath.Join(s.Dir(), name))
			t.Assert(err == nil, "the program's %s is not in the session directory the file API reads: %v", name, err)
		}
		for _, name := range []string{"report.txt", "d/" + filepath.Base(secretPath)} {
			b, err := s.ReadFile(name)
			t.Check(err != nil, "ReadFile(%q) followed the program's link", name)
			t.Check(!strings.Contains(string(b), secret), "ReadFile(%q) handed back the host secret", name)
			err = s.WriteFile(name, []byte("planted"))
			t.Check(err != nil, "WriteFile(%q) followed the program's link", name)
		}
		got, _ := os.ReadFile(secretPath)
		t.Check(string(got) == secret, "a write through a link changed the host secret")

		// A FIFO is not a file: reading it must be refused, and quickly
		// (a blocking read would hang the host).
		done := make(chan error, 1)
		go func() {
			_, err := s.ReadFile("pipe")
			done <- err
		}()
		select {
		case err := <-done:
			t.Check(err != nil, "ReadFile of a FIFO succeeded")
		case <-time.After(3 * time.Second):
			t.Check(false, "ReadFile of a FIFO hung the host")
		}
		t.Evidence("links to a host secret and through a linked directory refused, FIFO refused")
	},
}
