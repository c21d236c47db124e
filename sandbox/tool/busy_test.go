package tool

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/sandbox"
)

// TestBusyWording: a run refused because the machine was busy says so,
// that nothing ran, and to call again unchanged: never that the code is
// slow or wrong. It has no output sections, since nothing ran.
func TestBusyWording(t *testing.T) {
	res := &sandbox.Result{Level: 6, Reason: sandbox.ReasonBusy, ExitCode: -1, Message: "the machine is busy: …; nothing ran, try again"}
	text := carefulText(sandbox.MustPreset(6), res, keptStreams{})
	assert.Check(t, is.Contains(text, "the machine is busy"))
	assert.Check(t, is.Contains(text, "Nothing ran"))
	assert.Check(t, is.Contains(text, "call again, unchanged"))
	assert.Check(t, !strings.Contains(text, "stdout"), text)
	st := statusOf(res)
	assert.Check(t, is.Equal(st.Status, StatusError))
	assert.Check(t, is.Equal(st.Reason, "busy"))
}
