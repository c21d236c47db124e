package main

import (
	"context"
	"flag"
	"io"

	"sandboxlab/checks/agent"
	"sandboxlab/report"
)

func init() {
	register(command{name: "agent", summary: "run the scripted agent with the careful and the naive tool",
		args: reportUsage + " [--defect ID]", help: agentHelp}, agentCmd)
}

func agentHelp() string {
	return "Runs the scripted agent (rules, no model) on four tasks (typo, slow, state, memory) with the\n" +
		"careful tool and with the naive tool, each task in a fresh level-5 session, then the state\n" +
		"task once more with a careful tool whose description only says \"run some code\". The agent\n" +
		"reads only the tool's description and the text of each reply, and gives up after 6 calls.\n" +
		"Prints the notes' task x tool table (what goes wrong; solved in how many calls) with the\n" +
		"vague-description run as its last row; with --format junit each row is a testcase.\n" +
		"Takes about 5 s: three runs of the slow task wait for the time limit. Exits 0 when the table was\n" +
		"made, whatever it shows, and 1 when the sandbox could not run the agent's code."
}

// agentOptions are agent's flags. It shows no progress, so it has no
// --quiet or --verbose.
type agentOptions struct {
	output
	defectFlag
}

func (o *agentOptions) setFlags(fs *flag.FlagSet) {
	o.output.setFlags(fs, "agent", &report.Agent{}, false)
	o.defectFlag.setFlags(fs)
}

func (o *agentOptions) validate(cl commandLine) error {
	return firstError(cl.noArgs(), o.output.validate(), o.defectFlag.validate())
}

func agentCmd(ctx context.Context, o *agentOptions, stdout, stderr io.Writer) error {
	if err := o.enable(); err != nil {
		return err
	}
	rep, err := agent.Run(ctx)
	if err != nil {
		return err
	}
	return o.write(stdout, rep)
}
