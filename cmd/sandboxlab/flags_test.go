package main

import (
	"bytes"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestProgressLines: off on a pipe, on with --verbose (lines only, no
// status line: \r means nothing in a log), off with --quiet.
func TestProgressLines(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, false, false)
	p.line("hidden")
	assert.Check(t, is.Equal(b.String(), ""), "not a terminal")

	p = newProgress(&b, false, true)
	p.keepStatus(func() string { return "status" })
	p.line("[%d/%d] shown", 1, 2)
	p.end()
	assert.Check(t, is.Equal(b.String(), "[1/2] shown\n"))

	b.Reset()
	p = newProgress(&b, true, false)
	p.line("hidden")
	assert.Check(t, is.Equal(b.String(), ""), "--quiet")
}

// TestProgressStatusLine: on a terminal a finished step is printed above
// the status line, which is redrawn after it and erased at the end.
func TestProgressStatusLine(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b, on: true, tty: true}
	p.keepStatus(func() string { return "running" })
	p.line("step one")
	p.end()
	assert.Check(t, is.Equal(b.String(), "running\r\033[Kstep one\nrunning\r\033[K"))
}

func TestCounter(t *testing.T) {
	assert.Check(t, is.Equal(counter(3, 96), "[ 3/96]"))
	assert.Check(t, is.Equal(counter(12, 12), "[12/12]"))
}
