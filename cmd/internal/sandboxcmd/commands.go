package sandboxcmd

import "sandboxlab/cmd/internal/cli"

// Commands returns this package's commands, the sandboxlab binary's: each
// name's entry in cli.Commands, its help and its code.
func Commands() []cli.Command {
	return []cli.Command{
		cli.Implement("files", filesHelp, filesCmd),
		cli.Implement("run", runHelp, runCmd),
		cli.Implement("session", sessionHelp, sessionCmd),
	}
}
