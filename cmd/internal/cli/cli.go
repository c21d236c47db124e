// Package cli is what sandboxlab's two programs share: the one list of
// commands (Commands), the parsing every command goes through, and the
// exit codes an error carries.
//
// sandboxlab is two binaries. bin/sandboxlab holds the commands that run
// programs (run, session, files) and nothing that they do not use: no
// renderer, harness, MCP SDK or template, so that it starts about as
// fast as a Go program can. bin/sandboxlab-harness, beside it, holds the
// commands that judge the sandbox or serve it (check, attack, mutate, mcp
// and the rest); sandboxlab execs it for them, as git execs its helpers.
// Both take the same command lines and print the same help.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"sandboxlab/verdict"
)

// Binary names the program that holds a command's code.
type Binary string

const (
	// Sandbox is bin/sandboxlab: the commands that run programs.
	Sandbox Binary = "sandboxlab"
	// Harness is bin/sandboxlab-harness: the commands that judge the
	// sandbox or serve it.
	Harness Binary = "sandboxlab-harness"
)

// Info is a command as 'sandboxlab --help' lists it.
type Info struct {
	// Name is the command's name: "check", or "mutate merge" for a verb
	// of a command.
	Name string
	// Summary is its line in 'sandboxlab --help'.
	Summary string
	// Args is what follows 'sandboxlab NAME' on its usage line.
	Args string
	// In is the binary that holds its code.
	In Binary
	// FlagsFirst ends the flags at the first argument that is not one:
	// what follows is another program's command line (run). Otherwise
	// flags and arguments may come in any order.
	FlagsFirst bool
}

// Commands is every command of sandboxlab, sorted by name. The binaries
// implement theirs (Implement), and TestCommandsImplemented holds each
// binary to its share of this list.
var Commands = []Info{
	{Name: "agent", In: Harness, Summary: "run the scripted agent with the careful and the naive tool",
		Args: ReportUsage + " [--via mcp] [--defect ID]"},
	{Name: "attack", In: Harness, Summary: "run the attack programs (the course's 16, then the hardening suite's) at each level and print the matrix",
		Args: "[--suite course|hardening|all] [--only ID,...] [--levels LEVELS | --sandbox NAME ... [--profiles FILE]] " +
			ReportUsage + " " + ProgressUsage + " [--defect ID]"},
	{Name: "check", In: Harness, Summary: "run the promise checks (the course's 26, then the hardening suite's) against the sandbox",
		Args: "[--suite course|hardening|all] [--only ID,...] " + ReportUsage + " " + ProgressUsage + " [--defect ID]"},
	{Name: "compat", In: Harness, Summary: "run ordinary workloads (Python, shell, C, HTTPS) in the sandbox: does a level break them?",
		Args: "[--level N]... [--only NAME,...] " + ReportUsage + " " + ProgressUsage},
	{Name: "doctor", In: Harness, Summary: "say what this machine can give the sandbox, level by level",
		Args: ReportUsage},
	{Name: "experiment", In: Harness, Summary: "measure the course notes' experiments: cpu-quirk, nproc, layer-hiding",
		Args: "cpu-quirk|nproc|layer-hiding|all " + ReportUsage + " " + ProgressUsage},
	{Name: "files", In: Sandbox, Summary: "list, read, write or delete files of a session through the file API",
		Args: "--session DIR ls | get NAME | put NAME [FILE] | rm NAME"},
	{Name: "mcp", In: Harness, Summary: "serve the careful tool to an agent over MCP (stdin/stdout, or HTTP with --listen)",
		Args: "[--level N] [--timeout D] [--cpu D] [--memory SIZE] [--quota SIZE] [--allow HOST:PORT]... [--deny HOST:PORT]... " +
			"[--resolve NAME=ADDR]... [--credential DEST=HEADER:VAR]... " +
			"[--listen ADDR --token-file FILE [--tls-cert FILE --tls-key FILE | --tls-proxy] [--max-sandboxes N] [--max-runs N] [--idle D]]"},
	{Name: "mutate", In: Harness, Summary: "switch on each planted defect in turn and diff what fails against predictions.yaml",
		Args: "[--predictions FILE] [--suite course|hardening|all] [--only ID,...] [--shard K/N [--shard-times FILE]] [--no-select] [--repeat N] [--masking]" +
			" [-j N] [--timeout DURATION] [--fail-on escape|any|never] [--replay FILE] [--incremental FILE [--force]] [--since REV]" +
			" [--sandbox NAME [--profiles FILE] [--pairs [--max-pairs N]]] " + ReportUsage + " " + ProgressUsage},
	{Name: "mutate merge", In: Harness, Summary: "combine the JSON reports of sharded mutate runs into one report and gate",
		Args: "[--fail-on escape|any|never] " + ReportUsage + " SHARD.json..."},
	{Name: "run", In: Sandbox, FlagsFirst: true, Summary: "run one command in the sandbox",
		Args: "[--level N] [--json] [--session DIR] [--allow HOST:PORT]... [--deny HOST:PORT]... [--resolve NAME=ADDR]... " +
			"[--credential DEST=HEADER:VAR]... [--defect ID] [--] CMD [ARGS]"},
	{Name: "session", In: Sandbox, Summary: "make, remove or garbage-collect session directories that several runs share",
		Args: "new | rm DIR | gc [--root DIR]"},
}

// The usage-line words of the report commands' shared flags.
const (
	ReportUsage   = "[--format FORMAT] [--out DIR]"
	ProgressUsage = "[--quiet|--verbose]"
)

// Lookup finds the command args name, the one of most words ("mutate
// merge" before "mutate"), and returns it with the arguments after its
// name; nil when args name none.
func Lookup(args []string) (*Info, []string) {
	var found *Info
	words := 0
	for i := range Commands {
		c := &Commands[i]
		name := strings.Fields(c.Name)
		if len(name) > words && len(name) <= len(args) && strings.Join(args[:len(name)], " ") == c.Name {
			found, words = c, len(name)
		}
	}
	return found, args[words:]
}

// Options are a command's flags, the fields of a struct: the idea of
// gVisor's subcommands, each command's SetFlags.
type Options interface {
	// SetFlags registers the flags on fs, each bound to its field.
	SetFlags(fs *flag.FlagSet)
	// Validate checks the flags and the arguments once they are parsed,
	// and turns them into what the command runs with. Its error is a
	// usage error (exit 1), said before anything runs.
	Validate(cl Line) error
}

// Line is what Validate gets besides the flags' fields.
type Line struct {
	Command string          // the command's name
	Args    []string        // the arguments that are not flags, in order
	Given   map[string]bool // the flags given, by name
}

// NoArgs refuses arguments, for a command that takes none.
func (cl Line) NoArgs() error {
	if len(cl.Args) > 0 {
		return fmt.Errorf("unexpected argument %q (sandboxlab %s --help)", cl.Args[0], cl.Command)
	}
	return nil
}

// Command is a command of this binary: its entry in Commands, its help
// and its code.
type Command struct {
	*Info
	// Help returns the paragraphs of its --help above the flags (made on
	// demand: some list the registries).
	Help func() string
	// New returns the command's options, zero, and the function that runs
	// the command with them once they are parsed and valid.
	New func() (Options, func(ctx context.Context, stdout, stderr io.Writer) error)
}

// Implement returns the command name, run by run with its options O once
// they are parsed and valid. name must be in Commands: a command that is
// not is a programming error, and panics.
func Implement[O any, P interface {
	*O
	Options
}](name string, help func() string, run func(ctx context.Context, o P, stdout, stderr io.Writer) error) Command {
	info, rest := Lookup(strings.Fields(name))
	if info == nil || info.Name != name || len(rest) > 0 {
		panic("cli: no command " + name + " in cli.Commands")
	}
	return Command{Info: info, Help: help, New: func() (Options, func(context.Context, io.Writer, io.Writer) error) {
		o := P(new(O))
		return o, func(ctx context.Context, stdout, stderr io.Writer) error { return run(ctx, o, stdout, stderr) }
	}}
}

// Execute is every command's prologue, then the command: parse the flags
// (help asked for is a silent exit 0, a bad flag a silent exit 1: the
// flag package has said why), validate them, run.
func (c Command) Execute(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, run := c.New()
	fs := c.FlagSet(o, stderr)
	cl, err := c.Parse(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return nil
	case err != nil:
		return Exit(verdict.ExitInternal)
	}
	if err := o.Validate(cl); err != nil {
		return FailWith(verdict.ExitInternal, err)
	}
	return run(ctx, stdout, stderr)
}

// FlagSet returns the command's flag set, bound to o, whose errors and
// help go to w.
func (c Command) FlagSet(o Options, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	fs.SetOutput(w)
	o.SetFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(w, "usage: sandboxlab %s %s\n\n%s\n", c.Name, c.Args, c.Help())
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintf(w, "\nflags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// Parse parses args: the flags, wherever they are (but after "--", and
// after the first argument for a command whose flags come first), and
// the arguments that are not flags, in order.
func (c Command) Parse(fs *flag.FlagSet, args []string) (Line, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return Line{}, err
		}
		left := fs.Args()
		ended := len(left) < len(args) && args[len(args)-len(left)-1] == "--"
		if c.FlagsFirst || ended || len(left) == 0 {
			rest = append(rest, left...)
			break
		}
		rest, args = append(rest, left[0]), left[1:]
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return Line{Command: c.Name, Args: rest, Given: given}, nil
}

// Usage prints 'sandboxlab --help'.
func Usage(w io.Writer) {
	fmt.Fprintln(w, "usage: sandboxlab COMMAND [flags] [args]")
	fmt.Fprintln(w, "\nA sandbox for code an AI agent writes, and a harness that proves its test suite works.")
	fmt.Fprintln(w, "\ncommands:")
	width := 0
	for _, c := range Commands {
		width = max(width, len(c.Name))
	}
	for _, c := range Commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.Name, c.Summary)
	}
	fmt.Fprintln(w, "\nRun 'sandboxlab COMMAND --help' for a command's flags.")
}
