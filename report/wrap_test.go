package report

import (
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// allFixtures are every report the golden files pin.
func allFixtures() map[string]Report {
	exps := fixtureExperiments()
	return map[string]Report{
		"checks": fixtureChecks(), "attacks": fixtureAttacks(true), "attacks_defect": fixtureAttacksWithDefect(),
		"attacks_no_expected": fixtureAttacks(false), "mutation": fixtureMutation(), "mutation_broken": fixtureMutationBroken(),
		"checks_suites": fixtureSuitesChecks(), "attacks_suites": fixtureSuitesAttacks(false), "mutation_suites": fixtureSuitesMutation(),
		"agent": fixtureAgent(), "experiment": fixtureExperiments()[1], "experiments": &exps,
	}
}

// TestTextFitsWidth: at 80 and 120 columns (and a narrow 60) no line of
// any text report is wider than the terminal; markdown is the same at
// every width, unwrapped.
func TestTextFitsWidth(t *testing.T) {
	for name, r := range allFixtures() {
		md := render(t, Markdown, r)
		for _, width := range []int{60, 80, 120} {
			var b strings.Builder
			assert.NilError(t, WriteWith(&b, Text, r, Options{Width: width}))
			for i, line := range strings.Split(b.String(), "\n") {
				assert.Check(t, twwidth.Width(line) <= width, "%s at %d columns, line %d is %d wide: %q", name, width, i+1, twwidth.Width(line), line)
			}
			var m strings.Builder
			assert.NilError(t, WriteWith(&m, Markdown, r, Options{Width: width}))
			assert.Check(t, is.Equal(m.String(), md), "%s: markdown at %d columns", name, width)
		}
	}
}

func TestWrapText(t *testing.T) {
	assert.Check(t, is.Equal(wrapText("known too_wide: the tool words its reply", 16), "known too_wide:\nthe tool words\nits reply"))
	assert.Check(t, is.Equal(wrapText("ENETUNREACH", 5), "ENETU\nNREAC\nH"), "a word wider than the column is cut")
	assert.Check(t, is.Equal(wrapText("a\nb c", 3), "a\nb c"), "line breaks stay")
	assert.Check(t, is.Equal(wrapLines("- one two three four", 10), "- one two\n  three\n  four"), "a list item's text hangs")
}

// TestFitTableBlocks: a table too wide for its columns' longest words
// splits into blocks, each led by the first column, in as few blocks
// as fit.
func TestFitTableBlocks(t *testing.T) {
	header := []string{"attack", "L0", "L1", "L2", "L3"}
	rows := [][]string{{"exfiltrate", "network namespace", "network namespace", "network namespace", "network namespace"}}
	blocks := fitTable(header, rows, 50)
	assert.Assert(t, is.Len(blocks, 2))
	assert.Check(t, is.DeepEqual(blocks[0].header, []string{"attack", "L0", "L1"}))
	assert.Check(t, is.DeepEqual(blocks[1].header, []string{"attack", "L2", "L3"}))
	assert.Check(t, is.Equal(blocks[1].rows[0][0], "exfiltrate"))
	assert.Check(t, is.Len(fitTable(header, rows, 200), 1))
}
