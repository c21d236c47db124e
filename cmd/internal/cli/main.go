package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"sandboxlab/verdict"
)

// Dispatch runs the command args name with the binary b's commands impl,
// and returns the exit code. A command that another binary holds is the
// caller's to hand over (see Elsewhere); here it is a usage error.
func Dispatch(ctx context.Context, b Binary, impl []Command, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		Usage(stdout)
		if len(args) == 0 {
			return verdict.ExitInternal
		}
		return verdict.ExitOK
	}
	info, rest := Lookup(args)
	if info == nil {
		fmt.Fprintf(stderr, "sandboxlab: unknown command %q (see sandboxlab --help)\n", args[0])
		return verdict.ExitInternal
	}
	for _, c := range impl {
		if c.Info == info {
			return exitWith(c.Execute(ctx, rest, stdout, stderr), "sandboxlab "+c.Name, stderr)
		}
	}
	fmt.Fprintf(stderr, "sandboxlab %s: this command is in %s, not in %s\n", info.Name, info.In, b)
	return verdict.ExitInternal
}

// Elsewhere returns the binary that holds the command args name when it
// is not b, and "" otherwise (b's own command, help, or no command).
func Elsewhere(b Binary, args []string) Binary {
	if info, _ := Lookup(args); info != nil && info.In != b {
		return info.In
	}
	return ""
}

// Sibling is the path of the binary b beside this process's executable.
func Sibling(b Binary) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding this executable: %w", err)
	}
	return filepath.Join(filepath.Dir(self), string(b)), nil
}

// ExecSibling replaces this process with the binary b beside it, given
// the same command line: its exit status and signals are the caller's.
// It returns only when the exec fails, with the exit code to use, having
// said why on stderr.
func ExecSibling(b Binary, args []string, stderr io.Writer) int {
	path, err := Sibling(b)
	if err == nil {
		err = syscall.Exec(path, append([]string{"sandboxlab"}, args...), os.Environ())
	}
	name := args[0]
	if info, _ := Lookup(args); info != nil {
		name = info.Name
	}
	fmt.Fprintf(stderr, "sandboxlab %s: this command is in %s, which should be beside sandboxlab (make build builds both): %v\n", name, b, err)
	return verdict.ExitInternal
}
