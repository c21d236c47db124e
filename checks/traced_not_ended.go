package checks

import (
	_ "embed" // the program's source
	"os"
	"path/filepath"
	"strings"
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

//go:embed programs/trace_stop.py
var traceStop string

var tracedNotEnded = &Check{
	ID:      "traced_not_ended",
	Suite:   verdict.Hardening,
	Promise: "at L5 a program that makes the supervisor its tracer and stops itself is not reported ended: its run ends at the deadline, with its children",
	Level:   5,
	Body: func(t *T) {
		// The program is the supervisor's own child at L5 (the init execs
		// it), so PTRACE_TRACEME makes the supervisor its tracer, and the
		// kernel reports its stop to the supervisor's wait as if it were
		// an end. Its child writes for longer than the level's clock.
		tok := t.tagged()
		s := t.session(Preset(5), 0)
		res := t.python(s, sandbox.Command{}, traceStop, tok, "4")
		ticks := filepath.Join(s.Dir(), "ticks")
		left := alive(tok)
		before := fileSize(ticks)
		time.Sleep(100 * time.Millisecond)
		after := fileSize(ticks)
		t.Assert(strings.Contains(res.Stdout, "stopping"), "the program did not get to its stop: stdout %q, stderr %s", res.Stdout, lastLine(res.Stderr))
		t.Check(res.Reason == sandbox.ReasonTimeout, "the run ended %s (exit code %d) while its program was stopped, before its deadline", res.Reason, res.ExitCode)
		t.Check(left == 0, "%d processes of the run were alive after it was reported", left)
		t.Check(after == before, "the session's file grew from %d to %d bytes after the run was reported", before, after)
		t.Evidence("the program stopped itself traced by the supervisor (%s); the run ended %s after %d ms, none of its processes left, %s at %d bytes",
			strings.TrimSpace(res.Stdout), res.Reason, res.Wall.Milliseconds(), filepath.Base(ticks), after)
	},
}

// fileSize is path's size, -1 when it cannot be read.
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return st.Size()
}
