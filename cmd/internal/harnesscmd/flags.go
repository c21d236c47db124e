package harnesscmd

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"sandboxlab/report"
	"sandboxlab/verdict"
)

// The flags that several commands share, each group a type that the
// commands' options embed.

// selection is --suite and --only: which suites' members run, and which
// of them.
type selection struct {
	suite  string
	only   string
	suites []verdict.Suite // --suite, validated
}

// setFlags registers --suite and --only; only says what --only names.
func (s *selection) setFlags(fs *flag.FlagSet, only string) {
	fs.StringVar(&s.suite, "suite", verdict.AllSuites, "run the members of `SUITE`: "+strings.Join(suiteChoices(), ", ")+
		"\n(the course's are reported first, exactly as the course has them)")
	fs.StringVar(&s.only, "only", "", only)
}

func (s *selection) validate() error {
	suites, err := verdict.ParseSuites(s.suite)
	if err != nil {
		return fmt.Errorf("--suite: %w", err)
	}
	s.suites = suites
	return nil
}

// ids are --only's ids, in order.
func (s *selection) ids() []string { return splitList(s.only) }

// suiteChoices are the values --suite takes.
func suiteChoices() []string {
	var out []string
	for _, s := range verdict.Suites {
		out = append(out, string(s))
	}
	return append(out, verdict.AllSuites)
}

// gateFlag is --fail-on, the gate's policy.
type gateFlag struct {
	failOnFlag string
	failOn     verdict.FailOn // validated
}

func (g *gateFlag) setFlags(fs *flag.FlagSet) {
	fs.StringVar(&g.failOnFlag, "fail-on", string(verdict.FailOnEscape),
		"what fails the gate: `escape` (an unexpected escape, a flaky probe), any (any divergence), never")
}

func (g *gateFlag) validate() error {
	f, err := verdict.ParseFailOn(g.failOnFlag)
	if err != nil {
		return fmt.Errorf("--fail-on: %w", err)
	}
	g.failOn = f
	return nil
}

// output is the flags of a command that writes a report: the format on
// stdout, the directory that gets every format, and, for a command that
// shows progress on stderr, how chatty that is.
type output struct {
	command      string          // the report's file name in --out
	formats      []report.Format // the formats the command's report has
	withProgress bool            // --quiet and --verbose exist
	format       string
	out          string
	quiet        bool
	verbose      bool
	f            report.Format // --format, validated
	prog         *progress     // the progress shown, ended before the report is written
}

// setFlags registers --format and --out for the report of command, of
// sample's type, and with progress --quiet and --verbose.
func (o *output) setFlags(fs *flag.FlagSet, command string, sample report.Report, progress bool) {
	o.command, o.formats, o.withProgress = command, report.FormatsOf(sample), progress
	names := make([]string, len(o.formats))
	exts := make([]string, len(o.formats))
	for i, f := range o.formats {
		names[i], exts[i] = string(f), "."+f.Ext()
	}
	base := len(report.Formats)
	files := command + strings.Join(exts[:base-1], ", ") + " and " + exts[base-1]
	if extra := exts[base:]; len(extra) > 0 {
		files += ", plus " + strings.Join(extra, " and ")
	}
	fs.StringVar(&o.format, "format", string(report.Text), "report `FORMAT` on stdout: "+strings.Join(names, ", "))
	fs.StringVar(&o.out, "out", "", "also write the report in every format into `DIR` (made if missing): "+files)
	if progress {
		fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr, even on a terminal")
		fs.BoolVar(&o.verbose, "verbose", false, "progress on stderr even when it is not a terminal (CI logs)")
	}
}

func (o *output) validate() error {
	f, err := report.ParseFormatIn(o.format, o.formats)
	if err != nil {
		return fmt.Errorf("--format: %w", err)
	}
	if o.quiet && o.verbose {
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
	if o.out != "" {
		if _, err := report.WriteAllWith(o.out, o.command, r, opts); err != nil {
			return fmt.Errorf("--out %s: %w", o.out, err)
		}
	}
	if err := report.WriteWith(stdout, o.f, r, opts); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// progress returns the progress printer the flags ask for on stderr.
func (o *output) progress(stderr io.Writer) *progress {
	o.prog = newProgress(stderr, o.quiet, o.verbose)
	return o.prog
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
