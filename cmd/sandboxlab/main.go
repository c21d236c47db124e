// Command sandboxlab runs programs in the sandbox, checks the sandbox's
// promises, attacks it, and runs the planted-defect harness against its
// own test suite. It is thin: flags, wiring and exit codes; the work is
// done by the packages it calls.
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
	"sandboxlab/sandbox"
	"sandboxlab/sandbox/reexec"
	"sandboxlab/verdict"
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	// run does the command's work. A nil error exits 0; an error carries
	// its exit code (see exitError), ExitInternal when it says none.
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands []command

func register(c command) { commands = append(commands, c) }

func main() {
	// This binary is also the sandbox's init and the harness's helpers:
	// a helper never gets past this line.
	reexec.Init()
	// Whatever descriptors the shell or CI left open without close-on-exec
	// are not the sandbox's to pass on, not even at L0.
	unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	// The sessions of a sandboxlab killed before it could close them.
	sandbox.CollectGarbage("")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	sort.Slice(commands, func(i, j int) bool { return commands[i].name < commands[j].name })
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return verdict.ExitInternal
		}
		return verdict.ExitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			return exitWith(c.run(ctx, args[1:], stdout, stderr), "sandboxlab "+c.name, stderr)
		}
	}
	fmt.Fprintf(stderr, "sandboxlab: unknown command %q (see sandboxlab --help)\n", args[0])
	return verdict.ExitInternal
}

// exitWith prints err, if it says anything, and returns its exit code.
func exitWith(err error, prefix string, stderr io.Writer) int {
	if err == nil {
		return verdict.ExitOK
	}
	code := verdict.ExitInternal
	var e *exitError
	if errors.As(err, &e) {
		code = e.code
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintf(stderr, "%s: %s\n", prefix, msg)
	}
	return code
}

// exitError is an error that carries the exit code it calls for. With a
// nil err it is a silent exit: what there was to say is said.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// exit returns a silent exit with code (nil for 0).
func exit(code int) error {
	if code == verdict.ExitOK {
		return nil
	}
	return &exitError{code: code}
}

// failWith returns err with the exit code it calls for.
func failWith(code int, err error) error { return &exitError{code: code, err: err} }

// usagef reports a mistake on the command line (exit 1).
func usagef(format string, args ...any) error {
	return failWith(verdict.ExitInternal, fmt.Errorf(format, args...))
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: sandboxlab COMMAND [flags] [args]")
	fmt.Fprintln(w, "\nA sandbox for code an AI agent writes, and a harness that proves its test suite works.")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
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

// parseFlags parses args. Help asked for is a silent exit 0; bad flags a
// silent exit 1 (the flag package has said why).
func parseFlags(fs *flag.FlagSet, args []string) (stop bool, err error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return true, nil
		}
		return true, exit(verdict.ExitInternal)
	}
	return false, nil
}

// noArgs refuses positional arguments after the flags.
func noArgs(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (sandboxlab %s --help)", fs.Arg(0), fs.Name())
	}
	return nil
}

// suiteFlag adds --suite, which chooses the suites whose members run.
func suiteFlag(fs *flag.FlagSet) *string {
	return fs.String("suite", verdict.AllSuites, "run the members of `SUITE`: "+strings.Join(suiteChoices(), ", ")+
		"\n(the course's are reported first, exactly as the course has them)")
}

// suiteChoices are the values --suite takes.
func suiteChoices() []string {
	var out []string
	for _, s := range verdict.Suites {
		out = append(out, string(s))
	}
	return append(out, verdict.AllSuites)
}

// parseSuite applies --suite.
func parseSuite(value string) ([]verdict.Suite, error) {
	suites, err := verdict.ParseSuites(value)
	if err != nil {
		return nil, usagef("--suite: %v", err)
	}
	return suites, nil
}

// defectFlag adds --defect, which switches one planted defect on for the
// rest of the process (the harness uses it; see 'sandboxlab mutate').
func defectFlag(fs *flag.FlagSet) *string {
	return fs.String("defect", "", "switch on one planted `ID` (one of: "+strings.Join(mutants.IDs(), ", ")+")")
}

// enableDefect applies --defect.
func enableDefect(id string) error {
	if err := mutants.Enable(id); err != nil {
		return usagef("--defect: %v", err)
	}
	return nil
}
