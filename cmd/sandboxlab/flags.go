package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/sys/unix"

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

// progress shows how far a command is, on stderr. It is on when stderr
// is a terminal (a person waits for a run of minutes) or with --verbose
// (a CI log), off with --quiet and when stderr is a pipe or a file, so
// captured output stays clean. Each finished step is one line. On a
// terminal a live progress bar (mpb) sits below the lines, with the
// steps done and a status (for mutate: elapsed and the estimate of the
// time left); in a log there is no bar, since redrawing means nothing
// there.
type progress struct {
	w   io.Writer
	on  bool
	tty bool

	mu   sync.Mutex
	bars *mpb.Progress // nil: no bar
	bar  *mpb.Bar
}

func newProgress(w io.Writer, quiet, verbose bool) *progress {
	f, ok := w.(*os.File)
	tty := ok && isTerminal(f)
	return &progress{w: w, on: !quiet && (tty || verbose), tty: tty}
}

// isTerminal reports whether f is a terminal (it answers TCGETS).
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// terminalWidth returns the width of the terminal f is, or 0.
func terminalWidth(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return 0
	}
	return int(ws.Col)
}

// start shows the bar, on a terminal only: name, then the steps done of
// total (0: not known yet, when label says what runs meanwhile), then
// status() if status is set. It is redrawn a few times a second until
// end.
func (p *progress) start(name string, total int, label func() string, status func() string) {
	if !p.on || !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// Refreshed whatever mpb makes of the writer: the caller has found
	// a terminal, and the lines above the bar go out at each refresh.
	p.bars = mpb.New(mpb.WithOutput(p.w), mpb.WithWidth(40), mpb.WithRefreshRate(200*time.Millisecond), mpb.ForceAutoRefresh())
	steps := decor.Any(func(s decor.Statistics) string {
		if s.Total <= 0 && label != nil {
			return label()
		}
		return fmt.Sprintf("%d/%d", s.Current, s.Total)
	}, decor.WCSyncSpaceR)
	opts := []mpb.BarOption{mpb.PrependDecorators(decor.Name(name, decor.WCSyncSpaceR), steps), mpb.BarRemoveOnComplete()}
	if status != nil {
		opts = append(opts, mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return status() })))
	}
	p.bar = p.bars.AddBar(int64(total), opts...)
}

// set moves the bar to done steps of total.
func (p *progress) set(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil {
		return
	}
	p.bar.SetTotal(int64(total), false)
	p.bar.SetCurrent(int64(done))
}

// line prints a finished step: above the bar on a terminal, as a line
// of its own in a log.
func (p *progress) line(format string, args ...any) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bars != nil {
		fmt.Fprintf(p.bars, format+"\n", args...)
		return
	}
	fmt.Fprintf(p.w, format+"\n", args...)
}

// end removes the bar, once the lines above it are out, so the report
// that follows starts on a clean line of the terminal. It may be called
// more than once.
func (p *progress) end() {
	p.mu.Lock()
	bars, bar := p.bars, p.bar
	p.bars, p.bar = nil, nil
	p.mu.Unlock()
	if bars == nil {
		return
	}
	bar.Abort(true)
	bars.Wait()
}

// counter formats "[done/total]" with total's width, so lines align.
func counter(done, total int) string {
	w := len(fmt.Sprint(total))
	return fmt.Sprintf("[%*d/%d]", w, done, total)
}

// roundDuration rounds d to seconds for people.
func roundDuration(d time.Duration) time.Duration { return d.Round(time.Second) }

// listFlag is a flag that may be given more than once (--sandbox,
// --allow).
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}
