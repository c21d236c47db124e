package report

import (
	"fmt"
	"io"
	"io/fs"
	"strings"
)

// The formats only some reports have: a page for a browser (checks,
// attacks, mutation) and the mutation-testing world's JSON (mutation).
const (
	// HTML is one self-contained page: tables, the attack heat map and,
	// for a mutation report, the mutation-testing-elements component.
	HTML Format = "html"
	// Stryker is JSON valid against the mutation-testing-report-schema,
	// which StrykerJS, Stryker.NET, Stryker4s, PIT, Infection and Mull
	// also write, and which dashboards and the component read.
	Stryker Format = "stryker"
	// SARIF is SARIF 2.1.0, for GitHub code scanning: the escapes under
	// a sandbox's profile and its survived flags, at the profile's lines.
	SARIF Format = "sarif"
)

// ExtraFormats lists the formats some reports have beyond Formats, in
// the order --out writes them.
var ExtraFormats = []Format{HTML, Stryker, SARIF}

// Options says how to render what the model alone does not say: the
// terminal's width, and for Stryker's JSON the sources of the planted
// sites, where in them the sites are, and who wrote it. The zero Options
// renders at DefaultWidth with no sources (see Stryker).
type Options struct {
	// Width is the width text tables and prose are fitted to (0:
	// DefaultWidth). Markdown is never wrapped.
	Width int
	// Sources holds the files of the planted sites, by their path
	// relative to the module root (as Defect.Site names them). Without a
	// file, its mutants are placed on a line that says so.
	Sources fs.FS
	// Locate finds the planted sites of defect id in the file path, in
	// source order, each the span of its call; an error says the file
	// could not be read as Go. The
	// renderers parse no source: the harness passes its locator
	// (harness.SiteSpans). Without it, mutants are placed on the file's
	// first line, with a description that says so.
	Locate func(path, id string) ([]SourceSpan, error)
	// Version is sandboxlab's version, for Stryker's framework.
	Version string
	// System describes the machine that wrote the report, for Stryker's
	// system (nil: left out).
	System *StrykerSystem
}

func (o Options) width() int {
	if o.Width > 0 {
		return o.Width
	}
	return DefaultWidth
}

// htmlReport is a report that renders as a page.
type htmlReport interface {
	page(o Options) (*page, error)
}

// strykerReport is a report that renders as Stryker's JSON.
type strykerReport interface {
	Stryker(o Options) *StrykerReport
}

// sarifReport is a report that renders as SARIF.
type sarifReport interface {
	SARIF(o Options) *SARIFLog
}

// FormatsOf lists the formats r can be written in: Formats, then those
// of ExtraFormats it has.
func FormatsOf(r Report) []Format {
	out := append([]Format{}, Formats...)
	if _, ok := r.(htmlReport); ok {
		out = append(out, HTML)
	}
	if _, ok := r.(strykerReport); ok {
		out = append(out, Stryker)
	}
	if _, ok := r.(sarifReport); ok {
		out = append(out, SARIF)
	}
	return out
}

// ParseFormatIn checks a --format value against the formats a command's
// report has.
func ParseFormatIn(s string, formats []Format) (Format, error) {
	names := make([]string, len(formats))
	for i, f := range formats {
		if string(f) == s {
			return f, nil
		}
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown format %q (want %s)", s, strings.Join(names, ", "))
}

// writeExtra writes r in one of ExtraFormats.
func writeExtra(w io.Writer, f Format, r Report, o Options) error {
	switch f {
	case HTML:
		hr, ok := r.(htmlReport)
		if !ok {
			return fmt.Errorf("this report has no %s format", f)
		}
		pg, err := hr.page(o)
		if err != nil {
			return err
		}
		return pg.write(w)
	case Stryker:
		m, ok := r.(strykerReport)
		if !ok {
			return fmt.Errorf("only a mutation report has the %s format", f)
		}
		return writeStryker(w, m.Stryker(o))
	case SARIF:
		m, ok := r.(sarifReport)
		if !ok {
			return fmt.Errorf("this report has no %s format", f)
		}
		return writeSARIF(w, m.SARIF(o))
	}
	return fmt.Errorf("unknown format %q", f)
}
