package checks

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sandboxlab/sandbox"
)

var envScrubbed = &Check{
	ID:      "env_scrubbed",
	Promise: "host secrets in the environment do not reach the program",
	Level:   2,
	Body: func(t *T) {
		secret := token()
		// The environment the harness hands down, as an agent's host
		// process would: its own plus an API key.
		env := append(os.Environ(), "FAKE_API_KEY="+secret, "AWS_SECRET_ACCESS_KEY="+secret)
		s := t.session(Preset(2), 0)
		res := t.python(s, sandbox.Command{Env: env}, `
import os
for k, v in sorted(os.environ.items()):
    print(k + "=" + v)
`)
		t.Check(!strings.Contains(res.Stdout+res.Stderr, secret), "the fake API key reached the program")
		var names []string
		vars := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
			k, v, _ := strings.Cut(line, "=")
			names = append(names, k)
			vars[k] = v
		}
		sort.Strings(names)
		t.Check(strings.Join(names, " ") == "HOME LANG PATH TMPDIR", "the program's environment holds %s", strings.Join(names, " "))
		for _, k := range []string{"HOME", "TMPDIR"} {
			rel, err := filepath.Rel(s.Dir(), vars[k])
			t.Check(err == nil && !strings.HasPrefix(rel, ".."), "%s=%s is outside the session directory", k, vars[k])
		}
		t.Evidence("the program saw only %s; the fake key stayed out", strings.Join(names, ", "))
	},
}
