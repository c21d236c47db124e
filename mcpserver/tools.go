package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/tool"
)

// handlers serve one connection's tools over its session.
type handlers struct {
	cfg     Config
	session *sandbox.Session
	careful *tool.Careful
	// turn is held by the call using the session: runs of a session are
	// sequential, and a call waiting for its turn can still be cancelled.
	turn chan struct{}
	// served ends when the server must stop (a signal): the SDK then
	// waits for the calls in progress, whose own contexts it leaves
	// alone, so a run must end with it too.
	served context.Context
}

// The tools' arguments. The schemas are derived from these types; the
// descriptions come from the jsonschema tags.
type (
	runPythonArgs struct {
		Code string `json:"code" jsonschema:"the Python source to run, as with python3 -c"`
	}
	runShellArgs struct {
		Command string `json:"command" jsonschema:"the command line to run, as with sh -c"`
	}
)

// maxArgument is the longest program argument the kernel passes
// (MAX_ARG_STRLEN, with its terminating NUL): code reaches the program as
// one argument of python3 -c or sh -c.
const maxArgument = 128<<10 - 1

// progressEvery is how often a run in progress is reported to a client
// that asked for progress.
const progressEvery = 500 * time.Millisecond

func ptr[T any](v T) *T { return &v }

// addTools adds the six tools to s.
func (h *handlers) addTools(s *mcp.Server) {
	addRunTools(s, h.cfg.Policy, h.careful.Description(), h.careful.ShellDescription(), h.runPython, h.runShell)
	addFileTools(s, h.listFiles, h.readFile, h.writeFile, h.deleteFile)
}

// addRunTools adds run_python and run_shell to s, as both servers list
// them: their input types are the server's own (over HTTP, with the
// sandbox's handle).
func addRunTools[P, S any](s *mcp.Server, p sandbox.Policy, description, shellDescription string,
	python mcp.ToolHandlerFor[P, *tool.Status], shell mcp.ToolHandlerFor[S, *tool.Status]) {
	open := len(p.Network.Allow) > 0 || !p.Network.Isolate // a network the code can reach
	run := &mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(open)}
	mcp.AddTool(s, &mcp.Tool{Name: "run_python", Title: "Run Python", Description: description,
		Annotations: withTitle(run, "Run Python in the sandbox")}, python)
	mcp.AddTool(s, &mcp.Tool{Name: "run_shell", Title: "Run a shell command", Description: shellDescription,
		Annotations: withTitle(run, "Run a shell command in the sandbox")}, shell)
}

// withTitle returns a copy of a with title.
func withTitle(a *mcp.ToolAnnotations, title string) *mcp.ToolAnnotations {
	c := *a
	c.Title = title
	return &c
}

func (h *handlers) runPython(ctx context.Context, req *mcp.CallToolRequest, in runPythonArgs) (*mcp.CallToolResult, *tool.Status, error) {
	if res, st := checkProgram("code", in.Code); res != nil {
		return res, st, nil
	}
	return h.run(ctx, req, func(ctx context.Context) (tool.Reply, error) { return h.careful.Call(ctx, in.Code) })
}

func (h *handlers) runShell(ctx context.Context, req *mcp.CallToolRequest, in runShellArgs) (*mcp.CallToolResult, *tool.Status, error) {
	if res, st := checkProgram("command", in.Command); res != nil {
		return res, st, nil
	}
	return h.run(ctx, req, func(ctx context.Context) (tool.Reply, error) { return h.careful.RunShell(ctx, in.Command) })
}

// checkProgram refuses what cannot be a program's argument, as a tool
// error that says what to do instead.
func checkProgram(arg, text string) (*mcp.CallToolResult, *tool.Status) {
	var why string
	switch {
	case len(text) > maxArgument:
		why = fmt.Sprintf("the %s is %d bytes, over the %d bytes the kernel passes as one argument. "+
			"Write it to a file with write_file and run the file (run_shell: python3 FILE)", arg, len(text), maxArgument)
	case strings.IndexByte(text, 0) >= 0:
		why = fmt.Sprintf("the %s holds a NUL byte, which no program argument can", arg)
	case !utf8.ValidString(text):
		why = fmt.Sprintf("the %s is not valid UTF-8", arg)
	default:
		return nil, nil
	}
	return notRun(why)
}

// notRun is the reply to a call that ran nothing because of its arguments.
func notRun(why string) (*mcp.CallToolResult, *tool.Status) {
	text := fmt.Sprintf("Error: not run: %s. Nothing ran.", why)
	st := &tool.Status{Status: tool.StatusError, Reason: string(sandbox.ReasonRefused), Message: why, ExitCode: -1, Files: []sandbox.FileInfo{}}
	return textResult(text, true), st
}

// textResult is a result of one text block.
func textResult(text string, isError bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
}

// run takes the session's turn, reports progress while do runs, and
// turns the careful reply into the tool's result. A cancelled call's run
// is stopped by the sandbox with its whole tree (the context reaches
// Session.Run); the reply still says so, though the client has gone.
func (h *handlers) run(ctx context.Context, req *mcp.CallToolRequest, do func(context.Context) (tool.Reply, error)) (*mcp.CallToolResult, *tool.Status, error) {
	if h.served != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer context.AfterFunc(h.served, cancel)()
		defer cancel()
	}
	release, err := h.take(ctx)
	if err != nil {
		res, st := notRun("the call was cancelled while it waited for the session")
		return res, st, nil
	}
	defer release()
	stop := h.progress(ctx, req)
	reply, err := do(ctx)
	stop()
	if err != nil && ctx.Err() == nil {
		h.logf("sandboxlab mcp: the sandbox could not run a call: %v", err)
	}
	return textResult(reply.Text, reply.IsError()), reply.Status, nil
}

// take waits for the session's turn, or for ctx.
func (h *handlers) take(ctx context.Context) (release func(), err error) {
	select {
	case h.turn <- struct{}{}:
		return func() { <-h.turn }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// progress sends progress notifications while a run goes, if the client
// asked for them with a progress token: the seconds elapsed, of the time
// limit. The returned function stops them, and returns once the last was
// sent.
func (h *handlers) progress(ctx context.Context, req *mcp.CallToolRequest) (stop func()) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return func() {}
	}
	limit := h.cfg.Policy.TimeLimit()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		start := time.Now()
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			elapsed := time.Since(start)
			msg := fmt.Sprintf("running for %.1f s", elapsed.Seconds())
			if limit > 0 {
				msg += fmt.Sprintf(" of at most %g s", limit.Seconds())
			}
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token,
				Progress: elapsed.Seconds(), Total: limit.Seconds(), Message: msg})
		}
	}()
	return func() { close(done); <-finished }
}
