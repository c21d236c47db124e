package checks

import (
	_ "embed" // the program's source
	"os"
	"path/filepath"
	"strings"

	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

//go:embed programs/session_view.py
var sessionView string

var noHostSessionPath = &Check{
	ID:      "no_host_session_path",
	Suite:   verdict.Hardening,
	Promise: "at L6 the program finds its session at " + sandbox.SessionMount + ": the session's host path is in none of its working directory, environment or mount table",
	Level:   6,
	Body: func(t *T) {
		tok := t.tagged()
		s := t.session(Preset(6), 0)
		res := t.python(s, sandbox.Command{}, sessionView, tok)
		t.Assert(strings.Contains(res.Stdout, "\ndone\n"), "the program did not read everything: stdout %q, stderr %s", res.Stdout, lastLine(res.Stderr))
		// The session's directory name is the harness's own (random, and
		// below its temporary directory): any line that holds it came
		// from the host's view.
		host := s.Dir()
		var leaks []string
		for _, line := range strings.Split(res.Stdout, "\n") {
			if strings.Contains(line, filepath.Base(host)) {
				leaks = append(leaks, line)
			}
		}
		t.Check(len(leaks) == 0, "%d lines the program read name the session's host path %s: %q", len(leaks), host, leaks)
		var cwd string
		for _, line := range strings.Split(res.Stdout, "\n") {
			if v, ok := strings.CutPrefix(line, "cwd="); ok {
				cwd = v
			}
		}
		t.Check(cwd == sandbox.SessionMount, "the program started in %q, not %s", cwd, sandbox.SessionMount)
		// And the session is still the session: what the program wrote
		// where it started is in the host's directory.
		b, err := os.ReadFile(filepath.Join(host, "written-"+tok))
		t.Check(err == nil && string(b) == tok, "the program's file is not in the session's directory on the host: %v", err)
		t.Evidence("the session is %s on the host; the program started in %q, read %d lines of working directory, environment and mount table, %d of them naming the host path",
			host, cwd, strings.Count(res.Stdout, "\n"), len(leaks))
	},
}
