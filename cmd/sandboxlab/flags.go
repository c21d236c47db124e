package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/report"
)

// formatUsage is the --format part of a command's usage line.
var formatUsage = "[--format " + strings.Join(report.FormatNames(), "|") + "] [--out DIR] [--quiet|--verbose]"

// output holds the flags every report command shares: the format on
// stdout, the directory that gets every format, and how chatty progress
// on stderr is.
type output struct {
	command string
	format  *string
	out     *string
	quiet   *bool
	verbose *bool
	f       report.Format
}

// outputFlags adds --format, --out, --quiet and --verbose for command.
func outputFlags(fs *flag.FlagSet, command string) *output {
	return &output{
		command: command,
		format:  fs.String("format", string(report.Text), "report `FORMAT` on stdout: "+strings.Join(report.FormatNames(), ", ")),
		out: fs.String("out", "", "also write the report in every format into `DIR` (made if missing): "+
			command+".txt, .md, .json and .junit.xml"),
		quiet:   fs.Bool("quiet", false, "no progress on stderr, even on a terminal"),
		verbose: fs.Bool("verbose", false, "progress on stderr even when it is not a terminal (CI logs)"),
	}
}

// check validates the flags after parsing.
func (o *output) check() error {
	f, err := report.ParseFormat(*o.format)
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
// exists even if stdout is a broken pipe), then on stdout in --format.
func (o *output) write(stdout io.Writer, r report.Report) error {
	if *o.out != "" {
		if _, err := report.WriteAll(*o.out, o.command, r); err != nil {
			return fmt.Errorf("--out %s: %w", *o.out, err)
		}
	}
	if err := report.Write(stdout, o.f, r); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// progress returns the progress printer the flags ask for on stderr.
func (o *output) progress(stderr io.Writer) *progress {
	return newProgress(stderr, *o.quiet, *o.verbose)
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

// progress prints one line per finished step on stderr. It is on when
// stderr is a terminal (a person waits for a run of minutes) or with
// --verbose (a CI log), off with --quiet and when stderr is a pipe or a
// file, so captured output stays clean. On a terminal it can also keep a
// status line (elapsed, ETA) below the finished steps, redrawn every
// second; elsewhere the status is never drawn, since \r means nothing in a
// log.
type progress struct {
	w   io.Writer
	on  bool
	tty bool

	mu     sync.Mutex
	status func() string // the status line's text; nil: none
	drawn  bool          // a status line is on screen
	stop   chan struct{}
	done   chan struct{}
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

// line prints a finished step, above the status line if one is drawn.
func (p *progress) line(format string, args ...any) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	fmt.Fprintf(p.w, format+"\n", args...)
	p.draw()
}

// keepStatus shows status() on a status line, redrawn every second until
// end is called. It does nothing unless progress is on and stderr is a
// terminal.
func (p *progress) keepStatus(status func() string) {
	if !p.on || !p.tty {
		return
	}
	p.mu.Lock()
	p.status, p.stop, p.done = status, make(chan struct{}), make(chan struct{})
	p.draw()
	p.mu.Unlock()
	go func() {
		defer close(p.done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.mu.Lock()
				p.clear()
				p.draw()
				p.mu.Unlock()
			}
		}
	}()
}

// end removes the status line, so the report that follows starts on a
// clean line of the terminal.
func (p *progress) end() {
	if p.stop == nil {
		return
	}
	close(p.stop)
	<-p.done
	p.mu.Lock()
	p.clear()
	p.status, p.stop = nil, nil
	p.mu.Unlock()
}

// clear erases the status line; the caller holds mu.
func (p *progress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// draw writes the status line without a newline; the caller holds mu.
func (p *progress) draw() {
	if p.status != nil && p.tty {
		fmt.Fprint(p.w, p.status())
		p.drawn = true
	}
}

// counter formats "[done/total]" with total's width, so lines align.
func counter(done, total int) string {
	w := len(fmt.Sprint(total))
	return fmt.Sprintf("[%*d/%d]", w, done, total)
}

// roundDuration rounds d to seconds for people.
func roundDuration(d time.Duration) time.Duration { return d.Round(time.Second) }
