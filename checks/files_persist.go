package checks

import (
	"strings"

	"sandboxlab/sandbox"
)

var filesPersist = &Check{
	ID:      "files_persist",
	Promise: "a file written in one run is there in the next run of the session",
	Level:   2,
	Body: func(t *T) {
		s := t.session(Preset(2), 0)
		value := token()
		t.python(s, sandbox.Command{}, "import sys\nopen('carry.txt', 'w').write(sys.argv[1])", value)
		res := t.python(s, sandbox.Command{}, `
try:
    print(open('carry.txt').read())
except OSError as e:
    print(e)
`)
		t.Check(strings.TrimSpace(res.Stdout) == value, "the second run found %q, not the value the first wrote", strings.TrimSpace(res.Stdout))
		t.Evidence("the second of %d runs read back what the first wrote", s.Runs())
	},
}
