package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Format is an output format.
type Format string

// The output formats. Every report renders in each of them, from the same
// model, so they carry the same facts.
const (
	// Text is box-drawn tables for a terminal.
	Text Format = "text"
	// Markdown is tables ready to paste into a page (GitHub-flavoured).
	Markdown Format = "markdown"
	// JSON is the result model itself, indented.
	JSON Format = "json"
	// JUnit is JUnit XML as CI systems read it.
	JUnit Format = "junit"
)

// Formats lists the formats every report can be written in, in the order
// --out writes them.
var Formats = []Format{Text, Markdown, JSON, JUnit}

// FormatNames returns the names of Formats, for flag help.
func FormatNames() []string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return names
}

// ParseFormat checks a --format value.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown format %q (want %s)", s, strings.Join(FormatNames(), ", "))
}

// Ext is the file name extension WriteAll gives the format, without the
// dot. JUnit files end in .junit.xml because CI globs look for *.xml and
// people look for "junit".
func (f Format) Ext() string {
	switch f {
	case Text:
		return "txt"
	case Markdown:
		return "md"
	case JSON:
		return "json"
	case JUnit:
		return "junit.xml"
	case Stryker:
		return "stryker.json"
	}
	return string(f)
}

// Report is one command's result: it renders as tables for people and as
// JUnit test suites for CI; JSON is the value itself.
type Report interface {
	// Tables writes the report as tables, in markdown when md is set.
	Tables(w io.Writer, md bool) error
	// JUnit returns the report as JUnit test suites.
	JUnit() *TestSuites
}

// Write writes r to w in format f, with the default Options.
func Write(w io.Writer, f Format, r Report) error {
	return WriteWith(w, f, r, Options{})
}

// WriteWith writes r to w in format f, as o says.
func WriteWith(w io.Writer, f Format, r Report, o Options) error {
	switch f {
	case JSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case Markdown:
		return r.Tables(w, true)
	case Text:
		return r.Tables(&widthWriter{Writer: w, width: o.width()}, false)
	case JUnit:
		return writeJUnit(w, r.JUnit())
	}
	return writeExtra(w, f, r, o)
}

func writeJUnit(w io.Writer, s *TestSuites) error {
	b, err := xml.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding JUnit XML: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s%s\n", xml.Header, b)
	return err
}

// WriteAll writes r in every format it has (FormatsOf) into dir, with
// the default Options; see WriteAllWith.
func WriteAll(dir, name string, r Report) ([]string, error) {
	return WriteAllWith(dir, name, r, Options{})
}

// WriteAllWith writes r in every format it has (FormatsOf) into dir
// (made if missing), as name.txt, name.md, name.json, name.junit.xml and,
// where r has them, name.html and name.stryker.json, and returns the
// paths written. Text is fitted to DefaultWidth whatever o.Width says: a
// file has no terminal. Each file is written under a temporary name and
// renamed, so a CI step that archives dir never picks up half a report.
func WriteAllWith(dir, name string, r Report, o Options) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("making the report directory: %w", err)
	}
	o.Width = DefaultWidth
	var paths []string
	for _, f := range FormatsOf(r) {
		var buf bytes.Buffer
		if err := WriteWith(&buf, f, r, o); err != nil {
			return paths, fmt.Errorf("rendering %s: %w", f, err)
		}
		path := filepath.Join(dir, name+"."+f.Ext())
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
			return paths, fmt.Errorf("writing %s: %w", path, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
			return paths, fmt.Errorf("writing %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// printer writes to w and keeps the first error, so a renderer can write
// line after line and check once at the end.
type printer struct {
	w  io.Writer
	md bool
	// width is what text tables are fitted to (see fitTable).
	width int
	err   error
}

// newPrinter returns a printer on w, whose text tables fit w's width
// (widthOf).
func newPrinter(w io.Writer, md bool) *printer {
	return &printer{w: w, md: md, width: widthOf(w)}
}

// printf writes prose; in text its lines wider than the printer's width
// wrap at spaces (markdown is left for the page it is pasted into to
// wrap).
func (p *printer) printf(format string, args ...any) {
	if p.err != nil {
		return
	}
	s := fmt.Sprintf(format, args...)
	if !p.md {
		s = wrapLines(s, p.width)
	}
	_, p.err = io.WriteString(p.w, s)
}

// table writes one table followed by a blank line.
func (p *printer) table(header []string, rows [][]string) {
	if p.err == nil {
		p.err = table(p.w, p.md, p.width, header, rows)
	}
	p.printf("\n")
}

// heading writes a section heading: "## title" in markdown, an underlined
// title in text.
func (p *printer) heading(title string) {
	if p.md {
		p.printf("## %s\n\n", title)
	} else {
		p.underlined(title, "=")
	}
}

// subheading writes a heading one level below heading.
func (p *printer) subheading(title string) {
	if p.md {
		p.printf("### %s\n\n", title)
	} else {
		p.underlined(title, "-")
	}
}

// underlined writes a text heading, wrapped to the printer's width,
// underlined as wide as its widest line.
func (p *printer) underlined(title, rule string) {
	title = wrapText(title, p.width)
	w := 0
	for _, line := range strings.Split(title, "\n") {
		w = max(w, len([]rune(line)))
	}
	p.printf("%s\n%s\n", title, strings.Repeat(rule, w))
}

// table renders one table, as box-drawn text fitted to width columns
// (fitTable: long columns wrap, a table still too wide splits into
// blocks separated by a blank line), or as markdown, never wrapped, for
// pasting. In markdown a cell's '|' is escaped and a line break becomes
// <br>: either would otherwise end the cell or the table.
func table(w io.Writer, md bool, width int, header []string, rows [][]string) error {
	if !md {
		for i, b := range fitTable(header, rows, width) {
			if i > 0 {
				if _, err := io.WriteString(w, "\n"); err != nil {
					return err
				}
			}
			if err := renderTable(w, false, b.header, b.rows); err != nil {
				return err
			}
		}
		return nil
	}
	return renderTable(w, true, header, rows)
}

// renderTable renders one table through tablewriter.
func renderTable(w io.Writer, md bool, header []string, rows [][]string) error {
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	}
	if md {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
		esc := func(cells []string) []string {
			out := make([]string, len(cells))
			for i, c := range cells {
				c = strings.ReplaceAll(c, "|", `\|`)
				c = strings.ReplaceAll(c, "\r\n", "<br>")
				out[i] = strings.ReplaceAll(c, "\n", "<br>")
			}
			return out
		}
		header = esc(header)
		escaped := make([][]string, len(rows))
		for i, r := range rows {
			escaped[i] = esc(r)
		}
		rows = escaped
	}
	t := tablewriter.NewTable(w, opts...)
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	return t.Render()
}

func yesNo(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

// Tables renders the checks as one table and a summary line, per suite:
// the course's first, then each other suite's under its name. Markdown
// adds the promise each check tests; the terminal table leaves it out to
// stay readable, and the check's id names it.
func (c *Checks) Tables(w io.Writer, md bool) error {
	p := newPrinter(w, md)
	suites := c.suites()
	if len(suites) == 1 && isCourse(suites[0]) || len(suites) == 0 {
		c.table(p)
		return p.err
	}
	for i, s := range suites {
		if i > 0 {
			p.printf("\n")
		}
		if !isCourse(s) {
			p.heading(suiteWord(s) + " suite")
		}
		c.InSuite(s).table(p)
	}
	return p.err
}

// table writes the checks' table and their summary line.
func (c *Checks) table(p *printer) {
	md := p.md
	rows := make([][]string, 0, len(c.Checks))
	for _, ch := range c.Checks {
		row := []string{ch.ID}
		if md {
			row = append(row, ch.Promise)
		}
		row = append(row, fmt.Sprintf("L%d", ch.Level), yesNo(ch.Passed, "pass", "FAIL"), fmt.Sprintf("%d", ch.MS), ch.Evidence)
		rows = append(rows, row)
	}
	header := []string{"check", "level", "verdict", "ms", "evidence"}
	if md {
		header = []string{"check", "promise", "level", "verdict", "ms", "evidence"}
	}
	p.table(header, rows)
	defect := ""
	if c.Defect != "" {
		defect = fmt.Sprintf(" with defect %s", c.Defect)
	}
	p.printf("%d passed, %d failed%s (%s)\n", c.Passed, c.Failed, defect, c.Identity.who())
}

// who says who ran a report, in the words every report uses.
func (id Identity) who() string {
	s := fmt.Sprintf("harness uid %d", id.UID)
	if id.Root {
		s += " (root)"
	}
	return s + fmt.Sprintf(", programs ran as host uid %d", id.ProgramUID)
}
