package reporttest

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestTablesText: a wrapped row reads back as one row, a table split into
// column blocks one blank line apart as one table, and a box further
// down as a table of its own.
func TestTablesText(t *testing.T) {
	doc := `Heading
┌────────┬─────┐
│ attack │ L0  │
├────────┼─────┤
│ exfil  │ a b │
│        │ c   │
│ fork   │ e   │
└────────┴─────┘

┌────────┬─────┐
│ attack │ L1  │
├────────┼─────┤
│ exfil  │ d   │
│ fork   │ f   │
└────────┴─────┘


┌────────┬─────┐
│ attack │ L2  │
├────────┼─────┤
│ exfil  │ g   │
│ fork   │ h   │
└────────┴─────┘
`
	assert.Check(t, is.DeepEqual(Tables(doc, false), [][][]string{
		{{"attack", "L0", "L1"}, {"exfil", "a b c", "d"}, {"fork", "e", "f"}},
		{{"attack", "L2"}, {"exfil", "g"}, {"fork", "h"}},
	}))
	assert.Check(t, is.Len(Tables(doc, true), 0), "no markdown table in a text rendering")
}

// TestTablesMarkdown: an escaped '|' stays in its cell, the alignment row
// is left out, and a line that is not a row ends the table.
func TestTablesMarkdown(t *testing.T) {
	doc := "| a | b |\n|:--|--:|\n| 1 | x \\| y |\n\n| c |\n|---|\n| 2 |\n"
	tables := Tables(doc, true)
	assert.Check(t, is.DeepEqual(tables, [][][]string{
		{{"a", "b"}, {"1", "x | y"}},
		{{"c"}, {"2"}},
	}))
	assert.Check(t, is.DeepEqual(FindTable(tables, "c"), [][]string{{"c"}, {"2"}}))
	assert.Check(t, FindTable(tables, "d") == nil)
}
