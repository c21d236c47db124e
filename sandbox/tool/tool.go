// Package tool is what a model sees of the sandbox: a tool with a
// description, one argument (the code) and a reply. The model never sees a
// Result; what the reply says decides whether it can recover from a
// mistake, so the package offers two tools to compare: a careful one that
// says what happened and what to try, and a naive one that returns standard
// output and nothing else.
package tool

import (
	"context"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/egress"
)

// Python is the interpreter every call runs. It is an absolute path to the
// system's Python: a pyenv shim lives under /root, which the program's
// unprivileged identity cannot read.
const Python = "/usr/bin/python3"

// Tool is one code tool as a model sees it.
type Tool interface {
	// Name names the variant ("careful", "naive") for reports.
	Name() string
	// Description is the text the model reads before its first call.
	Description() string
	// Call runs code (Python source) in the tool's session and returns the
	// reply the model reads. The error is non-nil only when the sandbox
	// could not run the code at all or ctx was cancelled; a failing or
	// stopped program is described by the reply.
	Call(ctx context.Context, code string) (Reply, error)
}

// Reply is what one call hands back to the model.
type Reply struct {
	// Text is what the model reads.
	Text string `json:"text"`
	// Status is the same outcome in structured form, for a model or a
	// harness that acts on fields rather than prose. Nil for the naive tool,
	// which has no such thing.
	Status *Status `json:"status,omitempty"`
}

// IsError reports whether the reply reports an error (a refused, stopped
// or failing run). A reply without a status never does: that is the naive
// tool's flaw.
func (r Reply) IsError() bool { return r.Status != nil && r.Status.Status == StatusError }

// The values of Status.Status.
const (
	// StatusOK: the program ran and exited with status 0.
	StatusOK = "ok"
	// StatusError: the run was refused or stopped, or the program exited
	// with a non-zero status.
	StatusError = "error"
)

// ReasonUnavailable is Status.Reason when the sandbox could not run the
// code at all (no sandbox.Result exists), so that the status still names a
// cause.
const ReasonUnavailable = "unavailable"

// Status is the structured outcome of one call, copied from the sandbox's
// Result without the output itself (that is in Reply.Text, once).
type Status struct {
	// Status is StatusOK or StatusError.
	Status string `json:"status"`
	// Reason is why the run ended (a sandbox.Reason, or ReasonUnavailable).
	Reason string `json:"reason"`
	// Message explains a refused or unavailable run.
	Message string `json:"message,omitempty"`
	// ExitCode is the program's exit status, -1 when a signal ended it or
	// it never ran.
	ExitCode int `json:"exit_code"`
	// Signal names the signal that ended the program, if one did.
	Signal string `json:"signal,omitempty"`
	// TimedOut and OOM are the sandbox's flags, passed on as they are. The
	// reply's wording does not depend on them but on Reason.
	TimedOut bool `json:"timed_out"`
	OOM      bool `json:"oom"`
	// StdoutTruncated and StderrTruncated say the middle of a stream was cut.
	StdoutTruncated bool `json:"stdout_truncated"`
	StderrTruncated bool `json:"stderr_truncated"`
	// StdoutBytes and StderrBytes count everything the program wrote.
	StdoutBytes int64 `json:"stdout_bytes"`
	StderrBytes int64 `json:"stderr_bytes"`
	// Files lists the session's working directory after the call.
	Files []sandbox.FileInfo `json:"files"`
	// FilesTruncated says there were more files than listed.
	FilesTruncated bool `json:"files_truncated"`
	// Network is the egress proxy's log of the call's requests (none
	// without an allowlist), and NetworkDropped the requests past its
	// limit.
	Network        []egress.Request `json:"network,omitempty"`
	NetworkDropped int              `json:"network_dropped,omitempty"`
}

// runPython runs code in s the way both tools do: the system Python with
// the code as its -c argument, in the session's directory at every level
// (so that files survive there even where the policy does not make the
// directory private), with a minimal environment so that no variable of
// the host (a secret, a PYTHONPATH) reaches the program through the tool.
func runPython(ctx context.Context, s *sandbox.Session, code string) (*sandbox.Result, error) {
	return runProgram(ctx, s, Python, "-c", code)
}

// runProgram runs path with args in s as runPython runs the interpreter.
func runProgram(ctx context.Context, s *sandbox.Session, path string, args ...string) (*sandbox.Result, error) {
	return s.Run(ctx, sandbox.Command{
		Path: path,
		Args: args,
		Env:  []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"},
		Dir:  s.Dir(),
	})
}

// Both tools are Tools: the agent and the checks take either.
var (
	_ Tool = (*Careful)(nil)
	_ Tool = (*Naive)(nil)
)
