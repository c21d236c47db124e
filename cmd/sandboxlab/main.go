// Command sandboxlab runs programs in the sandbox: run, session and
// files. The commands that judge the sandbox or serve it (check, attack,
// mutate, mcp and the rest) are in sandboxlab-harness beside it, which
// this binary execs for them (see package cli). This binary links the
// sandbox library and little else, so that every run starts as fast as
// a Go program can; it is also the sandbox's init, when no sandboxlab-init
// is beside it.
package main

import (
	"os"

	"sandboxlab/cmd/internal/cli"
	"sandboxlab/cmd/internal/sandboxcmd"
	"sandboxlab/sandbox/reexec"
)

func main() {
	// This binary is also the sandbox's init: a helper never gets past
	// this line.
	reexec.Init()
	if b := cli.Elsewhere(cli.Sandbox, os.Args[1:]); b != "" {
		os.Exit(cli.ExecSibling(b, os.Args[1:], os.Stderr))
	}
	os.Exit(sandboxcmd.Main(cli.Sandbox, sandboxcmd.Commands()))
}
