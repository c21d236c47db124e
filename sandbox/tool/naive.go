package tool

import (
	"context"

	"sandboxlab/sandbox"
)

// Naive is the tool as it is often first written: the reply is standard
// output and nothing else. An error (its traceback is on stderr), a timeout
// and an empty program all give the same empty string. It exists to be
// compared with Careful.
type Naive struct {
	session *sandbox.Session
}

// NewNaive returns the naive tool over s.
func NewNaive(s *sandbox.Session) *Naive { return &Naive{session: s} }

// NaiveDescription is the naive tool's description: minimal, as such a
// tool's usually is.
const NaiveDescription = "Runs Python code and returns its output."

// Name returns "naive".
func (n *Naive) Name() string { return "naive" }

// Description returns NaiveDescription.
func (n *Naive) Description() string { return NaiveDescription }

// Call runs code and returns its standard output (as the sandbox returned
// it, so cut at the output cap), without a status.
func (n *Naive) Call(ctx context.Context, code string) (Reply, error) {
	res, err := runPython(ctx, n.session, code)
	if res == nil {
		return Reply{}, err
	}
	return Reply{Text: res.Stdout}, err
}
