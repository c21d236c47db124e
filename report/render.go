package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Format is an output format.
type Format string

const (
	Text     Format = "text"
	Markdown Format = "markdown"
	JSON     Format = "json"
)

// Formats lists the formats every report can be written in.
var Formats = []Format{Text, Markdown, JSON}

// ParseFormat checks a --format value.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown format %q (want %s)", s, strings.Join(names, ", "))
}

// Report is anything that renders as tables for people.
type Report interface {
	// Tables writes the report as tables, in markdown when md is set.
	Tables(w io.Writer, md bool) error
}

// Write writes r to w in format f.
func Write(w io.Writer, f Format, r Report) error {
	switch f {
	case JSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case Markdown:
		return r.Tables(w, true)
	case Text:
		return r.Tables(w, false)
	}
	return fmt.Errorf("unknown format %q", f)
}

// table renders one table, as box-drawn text or as markdown.
func table(w io.Writer, md bool, header []string, rows [][]string) error {
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	}
	if md {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
		for _, r := range rows {
			for i := range r {
				r[i] = strings.ReplaceAll(r[i], "|", `\|`)
			}
		}
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

// Tables renders the checks as one table and a summary line.
func (c *Checks) Tables(w io.Writer, md bool) error {
	rows := make([][]string, 0, len(c.Checks))
	for _, ch := range c.Checks {
		rows = append(rows, []string{ch.ID, fmt.Sprintf("L%d", ch.Level), yesNo(ch.Passed, "pass", "FAIL"), fmt.Sprintf("%d", ch.MS), ch.Evidence})
	}
	if err := table(w, md, []string{"check", "level", "verdict", "ms", "evidence"}, rows); err != nil {
		return err
	}
	sep := "\n"
	if md {
		sep = "\n\n"
	}
	defect := ""
	if c.Defect != "" {
		defect = fmt.Sprintf(" with defect %s", c.Defect)
	}
	_, err := fmt.Fprintf(w, "%s%d passed, %d failed%s (harness uid %d, program uid %d)\n", sep, c.Passed, c.Failed, defect, c.Identity.UID, c.Identity.ProgramUID)
	return err
}
