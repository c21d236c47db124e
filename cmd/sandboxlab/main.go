// Command sandboxlab runs programs in the sandbox, checks the sandbox's
// promises, attacks it, and runs the planted-defect harness against its
// own test suite.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"sandboxlab/mutants"
)

// Exit codes shared by every command (see DESIGN.md, "The runner and the gate").
const (
	exitOK          = 0
	exitInternal    = 1   // usage or internal error
	exitEscape      = 2   // an unexpected escape
	exitDivergence  = 3   // a prediction divergence (--fail-on=any)
	exitBaseline    = 4   // the baseline is broken
	exitRunRefused  = 125 // the sandbox refused or failed to run the program
	exitRunNoExec   = 126 // the program was found but could not be executed
	exitRunNotFound = 127
)

// errUsage marks an error the user can fix by changing the command line.
var errUsage = errors.New("usage")

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
	// hidden keeps a command the harness runs for itself out of --help.
	hidden bool
}

var commands []command

func register(c command) { commands = append(commands, c) }

func main() {
	// Whatever descriptors the shell or CI left open without close-on-exec
	// are not the sandbox's to pass on, not even at L0.
	unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	sort.Slice(commands, func(i, j int) bool { return commands[i].name < commands[j].name })
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return exitInternal
		}
		return exitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "sandboxlab: unknown command %q (see sandboxlab --help)\n", args[0])
	return exitInternal
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: sandboxlab COMMAND [flags] [args]")
	fmt.Fprintln(w, "\nA sandbox for code an AI agent writes, and a harness that proves its test suite works.")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands {
		if !c.hidden {
			fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprintln(w, "\nRun 'sandboxlab COMMAND --help' for a command's flags.")
}

// newFlags returns a flag set whose errors and help go to stderr and whose
// usage line says what the command takes.
func newFlags(name, args, summary string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: sandboxlab %s %s\n\n%s\n\nflags:\n", name, args, summary)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args; it returns an exit code and false when the
// command should stop (help asked for, or bad flags).
func parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitInternal, false
	}
	return 0, true
}

// defectFlag adds --defect, which switches one planted defect on for the
// rest of the process (the harness uses it; see 'sandboxlab mutate').
func defectFlag(fs *flag.FlagSet) *string {
	return fs.String("defect", "", "switch on one planted `ID` (one of: "+strings.Join(mutants.IDs(), ", ")+")")
}

// enableDefect applies --defect.
func enableDefect(id string, stderr io.Writer) bool {
	if err := mutants.Enable(id); err != nil {
		fmt.Fprintf(stderr, "sandboxlab: --defect: %v\n", err)
		return false
	}
	return true
}
