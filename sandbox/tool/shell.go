package tool

import (
	"context"

	"sandboxlab/sandbox"
)

// Shell is the shell the careful tool's RunShell runs command lines with.
const Shell = "/bin/sh"

var shellWords = language{
	runs: "Runs a command line with /bin/sh -c in a sandbox and returns what it printed. " +
		"The system's programs are there (python3 among them); the working directory is the session's.",
	lost:     "shell variables, a cd and background processes do not survive between calls",
	argument: "Argument: command, the command line to run (as with sh -c).",
}

// CarefulShellDescription is the careful description of RunShell for a
// session with policy p and disk quota quota (negative: none): the same
// promises as CarefulDescription's, for a command line.
func CarefulShellDescription(p sandbox.Policy, quota int64) string {
	return describe(p, quota, shellWords)
}

// ShellDescription returns the description of the tool's RunShell, with
// the numbers its replies use.
func (c *Careful) ShellDescription() string {
	p := c.session.Policy()
	if c.replyChars > 0 {
		p.Limits.OutputChars = c.replyChars
	}
	return CarefulShellDescription(p, c.session.Quota())
}

// RunShell runs command with /bin/sh -c in the tool's session and words
// the reply as Call does: a failing, stopped or refused command is an
// error reply, and the error is non-nil only when the sandbox could not
// run it at all or ctx was cancelled.
func (c *Careful) RunShell(ctx context.Context, command string) (Reply, error) {
	return c.reply(runProgram(ctx, c.session, Shell, "-c", command))
}
