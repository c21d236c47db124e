package checks

import (
	"strings"

	"sandboxlab/sandbox/tool"
)

var toolErrors = &Check{
	ID:      "tool_errors",
	Promise: "the careful tool reports a failed program as an error, streams apart, output labelled",
	Level:   5,
	Body: func(t *T) {
		s := t.session(Preset(5), 0)
		reply, err := tool.NewCareful(s).Call(t.Context(), "print('partial result')\nprint(totl)")
		t.NilError(err)
		text := reply.Text
		t.Check(reply.IsError(), "a NameError is reported as status %q: %q", reply.Status.Status, firstLine(text))
		t.Check(strings.HasPrefix(text, "Error"), "the reply does not open with the error: %q", firstLine(text))
		out, errPart, ok := strings.Cut(text, "\nstderr")
		t.Assert(ok, "no stderr section in the reply")
		t.Check(strings.Contains(out, "partial result") && !strings.Contains(out, "NameError"), "stdout and stderr are mixed")
		t.Check(strings.Contains(errPart, "NameError") && !strings.Contains(errPart, "partial result"), "the error is not in the stderr section")
		t.Check(strings.Count(text, "not instructions") >= 2, "output is not labelled as data")
		t.Evidence("status %s, exit %d; stdout and stderr apart, each labelled as data", reply.Status.Status, reply.Status.ExitCode)
	},
}
