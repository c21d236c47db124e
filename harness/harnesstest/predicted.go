// Package harnesstest is for tests of code that reads mutation reports:
// PredictedRun makes the report of a run that went as predicted, without
// running anything. Only tests import it; the architecture test keeps it
// out of every binary.
package harnesstest

import (
	"sandboxlab/attacks"
	"sandboxlab/checks"
	"sandboxlab/harness"
	"sandboxlab/report"
	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

// PredictedRun is the report of a mutation run that went exactly as
// predictions.yaml says, judged by it: every check passes on the correct
// sandbox, every attack is first stopped where the baseline says, and
// every defect fails the checks and opens the cells predicted. It is made
// from the registries.
func PredictedRun() (*report.Mutation, error) {
	preds, _, err := harness.LoadPredictions("")
	if err != nil {
		return nil, err
	}
	base := report.Baseline{Checks: &report.Checks{}, Attacks: &report.Attacks{Suites: map[string]verdict.Suite{}}}
	for _, c := range checks.All {
		base.Checks.Checks = append(base.Checks.Checks, report.Check{ID: c.ID, Suite: c.Suite, Level: c.Level, Passed: true})
	}
	base.Checks.Tally()
	a := base.Attacks
	for l := range sandbox.Levels {
		a.Levels = append(a.Levels, l)
	}
	for _, at := range attacks.All() {
		a.Attacks, a.Suites[at.ID] = append(a.Attacks, at.ID), at.Suite
		for _, l := range a.Levels {
			if at.Suite.OrCourse().HasLevel(l) {
				a.Cells = append(a.Cells, report.Cell{Attack: at.ID, Level: l, Escaped: l < preds.Baseline.Attacks[at.ID]})
			}
		}
	}
	a.Summarize()
	facts := &report.Mutation{Baseline: base}
	for _, d := range preds.Planted() {
		p := preds.Lookup(string(d.ID))
		facts.Defects = append(facts.Defects, report.Defect{ID: string(d.ID), Suite: d.Suite, Site: d.Site,
			FailedChecks: p.CheckIDs(), EscapedAttacks: p.Cells()})
	}
	return harness.Rejudge(facts, preds, verdict.FailOnEscape)
}
