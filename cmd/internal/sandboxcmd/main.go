package sandboxcmd

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"sandboxlab/cmd/internal/cli"
	"sandboxlab/sandbox"
)

// Main is what both binaries do once reexec.Init has returned: close
// what the caller left open, collect the sessions of a sandboxlab killed
// before it could close them, and run the command the arguments name
// with b's commands. It returns the exit code.
func Main(b cli.Binary, commands []cli.Command) int {
	// Whatever descriptors the shell or CI left open without
	// close-on-exec are not the sandbox's to pass on, not even at L0.
	unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	sandbox.CollectGarbage("")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return cli.Dispatch(ctx, b, commands, os.Args[1:], os.Stdout, os.Stderr)
}
