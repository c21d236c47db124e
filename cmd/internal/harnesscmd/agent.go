package harnesscmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"sandboxlab/checks/agent"
	"sandboxlab/cmd/internal/cli"
	"sandboxlab/mcpserver"
	"sandboxlab/report"
)

func agentHelp() string {
	return "Runs the scripted agent (rules, no model) on four tasks (typo, slow, state, memory) with the\n" +
		"careful tool and with the naive tool, each task in a fresh level-5 session, then the state\n" +
		"task once more with a careful tool whose description only says \"run some code\". The agent\n" +
		"reads only the tool's description and the text of each reply, and gives up after 6 calls.\n" +
		"Prints the notes' task x tool table (what goes wrong; solved in how many calls) with the\n" +
		"vague-description run as its last row; with --format junit each row is a testcase.\n" +
		"With --via mcp the careful tool's rows (the vague description's too) go through the MCP\n" +
		"client to a 'sandboxlab mcp' server of their own for each task: the same table shows that the\n" +
		"server is the careful tool. The naive rows run in this process (no server serves that tool).\n" +
		"Takes about 5 s: three runs of the slow task wait for the time limit. Exits 0 when the table was\n" +
		"made, whatever it shows, and 1 when the sandbox could not run the agent's code."
}

// agentOptions are agent's flags. It shows no progress, so it has no
// --quiet or --verbose.
type agentOptions struct {
	output
	cli.DefectFlag
	via string
}

func (o *agentOptions) SetFlags(fs *flag.FlagSet) {
	o.output.setFlags(fs, "agent", &report.Agent{}, false)
	o.DefectFlag.AddFlag(fs)
	fs.StringVar(&o.via, "via", "", "reach the careful tool through `mcp`: a 'sandboxlab mcp' server for each task, over the MCP client")
}

func (o *agentOptions) Validate(cl cli.Line) error {
	var via error
	switch {
	case o.via != "" && o.via != "mcp":
		via = fmt.Errorf("--via %q: the only way is mcp", o.via)
	case o.via != "" && o.DefectFlag.ID() != "":
		via = errors.New("--via mcp and --defect: the servers run without planted defects")
	}
	return cli.FirstError(cl.NoArgs(), o.output.validate(), o.DefectFlag.Check(), via)
}

func agentCmd(ctx context.Context, o *agentOptions, stdout, stderr io.Writer) error {
	if err := o.Enable(); err != nil {
		return err
	}
	run := agent.Run
	if o.via == "mcp" {
		bin, err := os.Executable()
		if err != nil {
			return err
		}
		// A server of this binary for each task, at the agent's level.
		open := mcpserver.Opener(bin, "--level", strconv.Itoa(agent.Level))
		run = func(ctx context.Context) (*report.Agent, error) { return agent.RunVia(ctx, open) }
	}
	rep, err := run(ctx)
	if err != nil {
		return err
	}
	return o.write(stdout, rep)
}
