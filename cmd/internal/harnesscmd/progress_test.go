package harnesscmd

import (
	"bytes"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestProgressLines: off on a pipe, on with --verbose (lines only, no
// bar: redrawing means nothing in a log), off with --quiet.
func TestProgressLines(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, false, false)
	p.start("check", 2, nil, nil)
	p.line("hidden")
	p.end()
	assert.Check(t, is.Equal(b.String(), ""), "not a terminal")

	p = newProgress(&b, false, true)
	p.start("check", 2, nil, func() string { return "status" })
	p.line("[%d/%d] shown", 1, 2)
	p.set(1, 2)
	p.end()
	assert.Check(t, is.Equal(b.String(), "[1/2] shown\n"))

	b.Reset()
	p = newProgress(&b, true, false)
	p.line("hidden")
	assert.Check(t, is.Equal(b.String(), ""), "--quiet")
}

// TestProgressBar: on a terminal the finished steps are printed once
// each, in order, above a bar that shows the steps done and the status;
// end waits for them and takes the bar away.
func TestProgressBar(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b, on: true, tty: true}
	p.start("mutate", 0, func() string { return "baseline" }, func() string { return "3s elapsed" })
	p.line("step one")
	p.set(1, 4)
	p.line("step two")
	p.end()
	p.end()
	out := b.String()
	assert.Check(t, is.Equal(strings.Count(out, "step one\n"), 1), out)
	assert.Check(t, is.Equal(strings.Count(out, "step two\n"), 1), out)
	assert.Check(t, strings.Index(out, "step one") < strings.Index(out, "step two"), out)
	p.line("after the end")
	assert.Check(t, is.Contains(b.String(), "after the end\n"), "with the bar gone, lines go straight out")
}

func TestCounter(t *testing.T) {
	assert.Check(t, is.Equal(counter(3, 96), "[ 3/96]"))
	assert.Check(t, is.Equal(counter(12, 12), "[12/12]"))
}
