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

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/reexec"
	"sandboxlab/verdict"
)

// command is one subcommand: its name and help, and its options (the
// flags as the fields of a struct), which register sets up.
type command struct {
	// name is the command's name: "check", or "mutate merge" for a verb
	// of a command.
	name string
	// summary is its line in 'sandboxlab --help'.
	summary string
	// args is what follows 'sandboxlab NAME' on its usage line.
	args string
	// help returns the paragraphs of its --help above the flags (made on
	// demand: some list the registries).
	help func() string
	// flagsFirst ends the flags at the first argument that is not one:
	// what follows is another program's command line (run). Otherwise
	// flags and arguments may come in any order.
	flagsFirst bool
	// new returns the command's options, zero, and the function that runs
	// the command with them once they are parsed and valid.
	new func() (options, func(ctx context.Context, stdout, stderr io.Writer) error)
}

// options are a command's flags, the fields of a struct: the idea of
// gVisor's subcommands, each command's SetFlags.
type options interface {
	// setFlags registers the flags on fs, each bound to its field.
	setFlags(fs *flag.FlagSet)
	// validate checks the flags and the arguments once they are parsed,
	// and turns them into what the command runs with. Its error is a
	// usage error (exit 1), said before anything runs.
	validate(cl commandLine) error
}

// commandLine is what validate gets besides the flags' fields.
type commandLine struct {
	command string          // the command's name
	args    []string        // the arguments that are not flags, in order
	given   map[string]bool // the flags given, by name
}

// noArgs refuses arguments, for a command that takes none.
func (cl commandLine) noArgs() error {
	if len(cl.args) > 0 {
		return fmt.Errorf("unexpected argument %q (sandboxlab %s --help)", cl.args[0], cl.command)
	}
	return nil
}

var commands []*command

// register adds the command c, run by run with its options O once they are
// parsed and valid.
func register[O any, P interface {
	*O
	options
}](c command, run func(ctx context.Context, o P, stdout, stderr io.Writer) error) {
	c.new = func() (options, func(context.Context, io.Writer, io.Writer) error) {
		o := P(new(O))
		return o, func(ctx context.Context, stdout, stderr io.Writer) error { return run(ctx, o, stdout, stderr) }
	}
	commands = append(commands, &c)
}

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
	if c, rest := lookup(args); c != nil {
		return exitWith(c.execute(ctx, rest, stdout, stderr), "sandboxlab "+c.name, stderr)
	}
	fmt.Fprintf(stderr, "sandboxlab: unknown command %q (see sandboxlab --help)\n", args[0])
	return verdict.ExitInternal
}

// lookup finds the command args name, the one of most words ("mutate
// merge" before "mutate"), and returns it with the arguments after its
// name.
func lookup(args []string) (*command, []string) {
	var found *command
	words := 0
	for _, c := range commands {
		name := strings.Fields(c.name)
		if len(name) > words && len(name) <= len(args) && strings.Join(args[:len(name)], " ") == c.name {
			found, words = c, len(name)
		}
	}
	return found, args[words:]
}

// execute is every command's prologue, then the command: parse the flags
// (help asked for is a silent exit 0, a bad flag a silent exit 1: the
// flag package has said why), validate them, run.
func (c *command) execute(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, run := c.new()
	fs := c.flagSet(o, stderr)
	cl, err := c.parse(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return nil
	case err != nil:
		return exit(verdict.ExitInternal)
	}
	if err := o.validate(cl); err != nil {
		return failWith(verdict.ExitInternal, err)
	}
	return run(ctx, stdout, stderr)
}

// flagSet returns the command's flag set, bound to o, whose errors and
// help go to w.
func (c *command) flagSet(o options, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(w)
	o.setFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(w, "usage: sandboxlab %s %s\n\n%s\n", c.name, c.args, c.help())
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintf(w, "\nflags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parse parses args: the flags, wherever they are (but after "--", and
// after the first argument for a command whose flags come first), and
// the arguments that are not flags, in order.
func (c *command) parse(fs *flag.FlagSet, args []string) (commandLine, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return commandLine{}, err
		}
		left := fs.Args()
		ended := len(left) < len(args) && args[len(args)-len(left)-1] == "--"
		if c.flagsFirst || ended || len(left) == 0 {
			rest = append(rest, left...)
			break
		}
		rest, args = append(rest, left[0]), left[1:]
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return commandLine{command: c.name, args: rest, given: given}, nil
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

// firstError returns the first of errs that is not nil: validate's checks
// in the order they are reported.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: sandboxlab COMMAND [flags] [args]")
	fmt.Fprintln(w, "\nA sandbox for code an AI agent writes, and a harness that proves its test suite works.")
	fmt.Fprintln(w, "\ncommands:")
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'sandboxlab COMMAND --help' for a command's flags.")
}
