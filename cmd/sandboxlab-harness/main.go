// Command sandboxlab-harness holds the commands of sandboxlab that judge
// the sandbox or serve it: check, attack, mutate, agent, experiment,
// compat, doctor and mcp. sandboxlab execs it for them; it takes the
// same command lines. It holds sandboxlab's own commands too, for the
// runs sandboxlab hands it: a run with --allow needs the egress proxy,
// which only this binary links. Its sandboxed runs start the lean sandboxlab-init
// beside it as their init, not this binary, which links the harness,
// the renderers and the MCP SDK.
package main

import (
	"os"

	"sandboxlab/cmd/internal/cli"
	"sandboxlab/cmd/internal/harnesscmd"
	"sandboxlab/cmd/internal/sandboxcmd"
	_ "sandboxlab/sandbox/egress/proxy" // sandboxlab hands its runs with --allow to this binary
	"sandboxlab/sandbox/reexec"
)

func main() {
	// This binary is also the harness's workers and probes: a helper
	// never gets past this line.
	reexec.Init()
	os.Exit(sandboxcmd.Main(cli.Harness, append(harnesscmd.Commands(), sandboxcmd.Commands()...)))
}
