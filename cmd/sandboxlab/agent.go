package main

import (
	"context"
	"io"

	"sandboxlab/checks/agent"
)

func init() {
	register(command{name: "agent", summary: "run the scripted agent with the careful and the naive tool", run: agentCmd})
}

func agentCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
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
	if stop, err := parseFlags(fs, args); stop {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return usagef("%v", err)
	}
	if err := enableDefect(*defect); err != nil {
		return err
	}
	rep, err := agent.Run(ctx)
	if err != nil {
		return err
	}
	return out.write(stdout, rep)
}
