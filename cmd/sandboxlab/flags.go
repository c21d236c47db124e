package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"sandboxlab/report"
)

// formatUsage is the --format part of a command's usage line.
var formatUsage = "[--format FORMAT] [--out DIR] [--quiet|--verbose]"

// output holds the flags every report command shares: the format on
// stdout, the directory that gets every format, and how chatty progress
// on stderr is.
type output struct {
	command string
	formats []report.Format // the formats the command's report has
	format  *string
	out     *string
	quiet   *bool
	verbose *bool
	f       report.Format
	prog    *progress // the progress shown, ended before the report is written
}

// outputFlags adds --format, --out, --quiet and --verbose for command,
// whose report has report.Formats and the extra formats named.
func outputFlags(fs *flag.FlagSet, command string, extra ...report.Format) *output {
	formats := append(slices.Clone(report.Formats), extra...)
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f)
	}
	files := command + ".txt, .md, .json and .junit.xml"
	if len(extra) > 0 {
		var exts []string
		for _, f := range extra {
			exts = append(exts, "."+f.Ext())
		}
		files += ", plus " + strings.Join(exts, " and ")
	}
	return &output{
		command: command,
		formats: formats,
		format:  fs.String("format", string(report.Text), "report `FORMAT` on stdout: "+strings.Join(names, ", ")),
		out: fs.String("out", "", "also write the report in every format into `DIR` (made if missing): "+
			files),
		quiet:   fs.Bool("quiet", false, "no progress on stderr, even on a terminal"),
		verbose: fs.Bool("verbose", false, "progress on stderr even when it is not a terminal (CI logs)"),
	}
}

// check validates the flags after parsing.
func (o *output) check() error {
	f, err := report.ParseFormatIn(*o.format, o.formats)
	if err != nil {
		return fmt.Errorf("--format: %w", err)
	}
	if *o.quiet && *o.verbose {
		return errors.New("--quiet and --verbose: choose one")
	}
	o.f = f
	return nil
}

// write writes r: into --out in every format first (so a CI artifact
// exists even if stdout is a broken pipe), then on stdout in --format,
// text fitted to stdout's terminal. Progress ends first, so that the
// report starts on a clean line.
func (o *output) write(stdout io.Writer, r report.Report) error {
	if o.prog != nil {
		o.prog.end()
	}
	opts := renderOptions(stdout)
	if *o.out != "" {
		if _, err := report.WriteAllWith(*o.out, o.command, r, opts); err != nil {
			return fmt.Errorf("--out %s: %w", *o.out, err)
		}
	}
	if err := report.WriteWith(stdout, o.f, r, opts); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// progress returns the progress printer the flags ask for on stderr.
func (o *output) progress(stderr io.Writer) *progress {
	o.prog = newProgress(stderr, *o.quiet, *o.verbose)
	return o.prog
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// listFlag is a flag that may be given more than once (--sandbox,
// --allow).
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}
