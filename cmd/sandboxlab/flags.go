package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// formatFlag adds --format.
func formatFlag(fs *flag.FlagSet) *string {
	return fs.String("format", "text", "output `format`: text, markdown or json")
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

// progress prints one line per finished step on stderr, only when stderr
// is a terminal: CI logs and pipes stay clean.
type progress struct {
	w  io.Writer
	on bool
}

func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	return &progress{w: w, on: ok && isTerminal(f)}
}

// isTerminal reports whether f is a terminal (it answers TCGETS).
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func (p *progress) line(format string, args ...any) {
	if p.on {
		fmt.Fprintf(p.w, format+"\n", args...)
	}
}
