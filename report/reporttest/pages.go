package reporttest

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"regexp"
	"strings"

	"sandboxlab/report"
)

// crossCheckStryker checks the Stryker report against the model: one
// mutant per defect, in the file of its site, with the status
// report.MutantStatus gives its run.
func crossCheckStryker(m *report.Mutation, data []byte) error {
	var r report.StrykerReport
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	found := map[string]report.StrykerMutant{}
	file := map[string]string{}
	n := 0
	for path, f := range r.Files {
		for _, mu := range f.Mutants {
			n++
			if _, dup := found[mu.ID]; dup {
				fail("mutant %s appears twice", mu.ID)
			}
			found[mu.ID], file[mu.ID] = mu, path
		}
	}
	if n != len(m.Defects) {
		fail("%d mutants, the JSON has %d defects", n, len(m.Defects))
	}
	for _, d := range m.Defects {
		mu, ok := found[d.ID]
		if !ok {
			fail("no mutant for defect %s", d.ID)
			continue
		}
		want, _, _, _ := report.MutantStatus(d, m.Probes(d.Suite.OrCourse()))
		if mu.Status != want {
			fail("mutant %s is %s, want %s (outcome %s)", d.ID, mu.Status, want, d.Outcome)
		}
		if d.Site != "" && file[d.ID] != d.Site {
			fail("mutant %s is in %s, its site is %s", d.ID, file[d.ID], d.Site)
		}
	}
	return errors.Join(errs...)
}

// defectRowAttrs finds a row of the page's per-defect table by the
// attributes the template gives it.
var defectRowAttrs = regexp.MustCompile(`<tr data-defect="([^"]*)" data-outcome="([^"]*)"`)

// crossCheckHTML checks the page against the model: a row per defect in
// report order, each with its outcome, and the lead sentence with the
// gate's verdict.
func crossCheckHTML(m *report.Mutation, doc string) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	var ids []string
	outcome := map[string]string{}
	for _, match := range defectRowAttrs.FindAllStringSubmatch(doc, -1) {
		id := html.UnescapeString(match[1])
		ids, outcome[id] = append(ids, id), html.UnescapeString(match[2])
	}
	var want []string
	for _, d := range m.Defects {
		want = append(want, d.ID)
		if got, ok := outcome[d.ID]; !ok {
			fail("defect %s is missing from the page", d.ID)
		} else if got != string(d.Outcome) {
			fail("defect %s: outcome %q on the page, the JSON says %q", d.ID, got, d.Outcome)
		}
	}
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		fail("the page's defect rows %v, the JSON has %v", ids, want)
	}
	lead := m.GateSentence()
	if !strings.Contains(html.UnescapeString(doc), lead) {
		fail("the page does not say %q", lead)
	}
	return errors.Join(errs...)
}
