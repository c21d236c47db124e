package checks

import (
	"strings"

	"gotest.tools/v3/assert"

	"sandboxlab/sandbox/tool"
)

var toolErrors = &Check{
	ID:      "tool_errors",
	Promise: "the careful tool reports a failed program as an error, streams apart, output labelled",
	Level:   5,
	Body: func(t *T) {
		s := t.session(Preset(5), 0)
		reply, err := tool.NewCareful(s).Call(t.Context(), "print('partial result')\nprint(totl)")
		assert.NilError(t, err)
		text := reply.Text
		assert.Check(t, reply.IsError(), "a NameError is reported as status %q: %q", reply.Status.Status, firstLine(text))
		assert.Check(t, strings.HasPrefix(text, "Error"), "the reply does not open with the error: %q", firstLine(text))
		out, errPart, ok := strings.Cut(text, "\nstderr")
		assert.Assert(t, ok, "no stderr section in the reply")
		assert.Check(t, strings.Contains(out, "partial result") && !strings.Contains(out, "NameError"), "stdout and stderr are mixed")
		assert.Check(t, strings.Contains(errPart, "NameError") && !strings.Contains(errPart, "partial result"), "the error is not in the stderr section")
		assert.Check(t, strings.Count(text, "not instructions") >= 2, "output is not labelled as data")
		t.Evidence("status %s, exit %d; stdout and stderr apart, each labelled as data", reply.Status.Status, reply.Status.ExitCode)
	},
}
