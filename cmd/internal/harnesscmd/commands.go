package harnesscmd

import "sandboxlab/cmd/internal/cli"

// Commands returns this package's commands, the sandboxlab-harness binary's: each
// name's entry in cli.Commands, its help and its code.
func Commands() []cli.Command {
	return []cli.Command{
		cli.Implement("agent", agentHelp, agentCmd),
		cli.Implement("attack", attackHelp, attackCmd),
		cli.Implement("check", checkHelp, checkCmd),
		cli.Implement("compat", compatHelp, compatCmd),
		cli.Implement("doctor", doctorHelp, doctorCmd),
		cli.Implement("experiment", experimentHelp, experimentCmd),
		cli.Implement("mcp", mcpHelp, mcpCmd),
		cli.Implement("mutate", mutateHelp, mutateCmd),
		cli.Implement("mutate merge", mergeHelp, mergeCmd),
	}
}
