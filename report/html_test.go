package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// renderPage returns r's page.
func renderPage(t *testing.T, r Report) string {
	t.Helper()
	var b bytes.Buffer
	assert.NilError(t, WriteWith(&b, HTML, r, strykerOptions()))
	return b.String()
}

var (
	heatmapTable = regexp.MustCompile(`<table class="heatmap" data-rows="(\d+)" data-columns="(\d+)" data-cells="(\d+)">`)
	heatCell     = regexp.MustCompile(`<td class="cell" tabindex="0" data-cell="([^"]+)" data-state="([^"]+)" title="([^"]*)">`)
)

// TestPageHeatMap: the attack page draws the 16 × 6 matrix as 96 cells,
// each with its state and a tooltip giving the mechanism and the
// evidence.
func TestPageHeatMap(t *testing.T) {
	doc := renderPage(t, fixtureAttacks(true))
	m := heatmapTable.FindStringSubmatch(doc)
	assert.Assert(t, m != nil, "no heat map")
	assert.Check(t, is.DeepEqual(m[1:], []string{"16", "6", "96"}))
	cells := heatCell.FindAllStringSubmatch(doc, -1)
	assert.Check(t, is.Len(cells, 96))
	states := map[string]string{}
	for _, c := range cells {
		states[c[1]] = c[2]
	}
	assert.Check(t, is.Equal(states["exfiltrate@L3"], string(Escaped)))
	assert.Check(t, is.Equal(states["exfiltrate@L4"], string(Stopped)))
	assert.Check(t, is.Contains(doc, "title=\"exfiltrate@L4: stopped by network namespace\nevidence: nothing reached the host\n214 ms\""))
	assert.Check(t, !strings.Contains(doc, "<mutation-test-report-app"), "the component is for mutation reports")

	d := renderPage(t, fixtureAttacksWithDefect())
	for _, c := range heatCell.FindAllStringSubmatch(d, -1) {
		if c[1] == "exfiltrate@L4" {
			assert.Check(t, is.Equal(c[2], string(UnexpectedEscape)))
			assert.Check(t, is.Contains(c[3], "ESCAPED at or above L4"))
		}
	}
}

// TestPageMutation: the mutation page has the lead sentence, the
// summary, the heat map of the baseline with the defects that opened
// each cell, the per-defect table, the component with the Stryker report
// inlined, and its licence; and it loads nothing from anywhere.
func TestPageMutation(t *testing.T) {
	m := fixtureMutation()
	doc := renderPage(t, m)
	assert.Check(t, is.Contains(doc, `<p class="lead bad" id="lead">The gate fails: unexpected results for caps_kept, no_pid_ns, quota_ignored, fresh_dir_per_run`))
	assert.Check(t, is.Contains(doc, `data-cells="96"`))
	assert.Check(t, is.Contains(doc, "let through by the defect no_net_ns"))
	assert.Check(t, is.Contains(doc, `<tr data-defect="traversal_ok" data-outcome="escaped"><td class="id"`))
	assert.Check(t, is.Contains(doc, `<tr data-defect="caps_kept" data-outcome="extra" class="unexpected">`))
	assert.Check(t, is.Contains(doc, `<mutation-test-report-app title-postfix="sandboxlab"></mutation-test-report-app>`))
	assert.Check(t, is.Contains(doc, elementsJS[:200]), "the bundle is inlined")
	assert.Check(t, is.Contains(doc, `"mutatorName":"no_net_ns"`), "the Stryker report is inlined")
	assert.Check(t, is.Contains(doc, "Apache License"))
	assert.Check(t, is.Contains(doc, `content="default-src 'none';`), "the policy forbids every request")
	// Links to documentation in the component are no requests; anything
	// the page would load is.
	for _, bad := range []string{`src="http`, `<link`, `@import`, `url(http`, `<script src`} {
		assert.Check(t, !strings.Contains(doc, bad), "the page would load %s", bad)
	}

	checks := renderPage(t, fixtureChecks())
	assert.Check(t, is.Contains(checks, `<tr data-check="timeout_flag"><td class="id">timeout_flag</td>`))
	assert.Check(t, is.Contains(checks, `<p class="lead bad" id="lead">3 passed, 1 failed.</p>`))
}

// TestPageFormats: which reports have which formats.
func TestPageFormats(t *testing.T) {
	assert.Check(t, is.DeepEqual(FormatsOf(fixtureMutation()), []Format{Text, Markdown, JSON, JUnit, HTML, Stryker}))
	assert.Check(t, is.DeepEqual(FormatsOf(fixtureChecks()), []Format{Text, Markdown, JSON, JUnit, HTML}))
	assert.Check(t, is.DeepEqual(FormatsOf(fixtureAgent()), Formats))
	var b bytes.Buffer
	assert.Check(t, is.ErrorContains(WriteWith(&b, HTML, fixtureAgent(), Options{}), "no html format"))
	assert.Check(t, is.ErrorContains(WriteWith(&b, Stryker, fixtureChecks(), Options{}), "only a mutation report"))
	_, err := ParseFormatIn("stryker", Formats)
	assert.Check(t, is.ErrorContains(err, `unknown format "stryker" (want text, markdown, json, junit)`))
}
