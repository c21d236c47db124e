package main

import (
	"context"
	"fmt"
	"io"

	"sandboxlab/checks"
)

func init() {
	register(command{name: "agent", summary: "run the scripted agent with the careful and the naive tool", run: agentCmd})
}

func agentCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("agent", formatUsage+" [--defect ID]",
		"Runs the scripted agent (rules, no model) on four tasks (typo, slow, state, memory) with the\n"+
			"careful tool and with the naive tool, each task in a fresh level-5 session, then the state\n"+
			"task once more with a careful tool whose description only says \"run some code\". The agent\n"+
			"reads only the tool's description and the text of each reply, and gives up after 6 calls.\n"+
			"Prints the notes' task x tool table (what goes wrong; solved in how many calls) with the\n"+
			"vague-description run as its last row; with --format junit each row is a testcase.\n"+
			"Takes about 5 s: three runs of the slow task wait for the time limit. Exits 0 when the table was\n"+
			"made, whatever it shows, and 1 when the sandbox could not run the agent's code.", stderr)
	out := outputFlags(fs, "agent")
	defect := defectFlag(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "sandboxlab agent: unexpected argument %q (sandboxlab agent --help)\n", fs.Arg(0))
		return exitInternal
	}
	if err := out.check(); err != nil {
		fmt.Fprintf(stderr, "sandboxlab agent: %v\n", err)
		return exitInternal
	}
	if !enableDefect(*defect, stderr) {
		return exitInternal
	}
	rep, err := checks.RunAgent(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "sandboxlab agent: %v\n", err)
		return exitInternal
	}
	if err := out.write(stdout, rep); err != nil {
		fmt.Fprintf(stderr, "sandboxlab agent: %v\n", err)
		return exitInternal
	}
	return exitOK
}
