package report

import (
	"fmt"
	"html/template"
	"strings"
	"unicode/utf16"
)

// Stryker returns the flag mutation in Stryker's schema: one file, the
// profile's (its YAML, or the custom prefix as a file of one line), with
// each mutant at its group's line and column, so that the
// mutation-testing-elements component shows the profile with its
// survived flags marked. Statuses: Killed (load-bearing, killedBy the
// attacks that got through), Survived, CompileError (unviable: the
// sandbox did not start, Stryker's word for a mutant that cannot run),
// RuntimeError (no verdict). The pairs are not mutants of their own
// here: a survivor's statusReason names the flags it was masked by.
func (f *FlagMutation) Stryker(o Options) *StrykerReport {
	src := f.Source
	if src == nil || src.Text == "" {
		src = &ProfileSource{File: "profile-" + f.Profile, Language: "shell", Text: strings.Join(f.Command, " ") + "\n"}
	}
	file := &StrykerFile{Language: src.Language, Source: src.Text, Mutants: []StrykerMutant{}}
	r := &StrykerReport{
		SchemaVersion: "2",
		Thresholds:    StrykerThresholds{High: StrykerThresholdHigh, Low: StrykerThresholdLow},
		Files:         map[string]*StrykerFile{src.File: file},
		TestFiles:     map[string]*StrykerTestFile{},
		Performance:   &StrykerPerformance{InitialRun: f.Baseline.Column.MS, Mutation: max(0, f.MS-f.Baseline.Column.MS)},
		Framework: &StrykerFramework{Name: "sandboxlab", Version: o.Version,
			Dependencies: map[string]string{"mutation-testing-report-schema": SchemaVersion}},
		System: o.System,
		Config: map[string]any{"sandbox": f.Spec, "tool": f.Tool, "pairs": f.Run.Pairs},
	}
	if r.Framework.Version == "" {
		r.Framework.Version = "unknown"
	}
	for _, m := range f.Mutants {
		file.Mutants = append(file.Mutants, f.strykerMutant(m, src))
	}
	var tests []StrykerTest
	for _, a := range f.Baseline.Stopped {
		tests = append(tests, StrykerTest{ID: a, Name: a + ": " + f.Escapes[a]})
	}
	if len(tests) > 0 {
		r.TestFiles["attacks under "+f.Profile] = &StrykerTestFile{Tests: tests}
	} else {
		r.TestFiles = nil
	}
	return r
}

// strykerMutant is one mutant at its group's span.
func (f *FlagMutation) strykerMutant(m FlagMutant, src *ProfileSource) StrykerMutant {
	at := f.Span(m)
	loc := StrykerLocation{Start: StrykerPosition{Line: 1, Column: 1}, End: StrykerPosition{Line: 1, Column: 1 + firstLineLen(src.Text)}}
	if !at.IsZero() {
		loc = StrykerLocation{Start: StrykerPosition{Line: at.StartLine, Column: at.StartColumn},
			End: StrykerPosition{Line: at.EndLine, Column: at.EndColumn}}
	}
	out := StrykerMutant{ID: m.ID, MutatorName: m.Operator, Description: m.Description, Replacement: m.Replacement,
		Location: loc, StatusReason: f.verdictText(m)}
	covered := append([]string{}, f.Baseline.Stopped...)
	switch m.Verdict {
	case LoadBearing:
		out.Status, out.KilledBy = StatusKilled, m.Killed
		out.StatusReason += ": escaped " + strings.Join(m.Killed, ", ")
	case Survived:
		out.Status = StatusSurvived
	case Unviable:
		out.Status, out.StatusReason = "CompileError", "unviable: "+m.Unviable
		covered = nil
	default:
		out.Status, out.StatusReason = StatusRuntimeError, "no verdict: "+m.Error
		covered = nil
	}
	if covered != nil {
		n, ms := len(covered), m.MS
		out.CoveredBy, out.TestsCompleted, out.Duration = covered, &n, &ms
	}
	return out
}

// firstLineLen is the length of text's first line in UTF-16 units.
func firstLineLen(text string) int {
	line, _, _ := strings.Cut(text, "\n")
	return len(utf16.Encode([]rune(line)))
}

// page draws the flag mutation: the summary, then the
// mutation-testing-elements component on the profile's file, each
// mutant at its flag (Stryker).
func (f *FlagMutation) page(o Options) (*page, error) {
	t := f.Tally()
	p := &page{Title: "sandboxlab mutate --sandbox " + f.Profile, Who: f.Identity.who(), LeadBad: !f.Baseline.OK || t.Survived > 0,
		Stryker: f.Stryker(o), ElementsJS: template.JS(elementsJS), ElementsVersion: ElementsVersion, License: elementsLicense}
	if !f.Baseline.OK {
		p.Lead = "The unmutated profile's column did not run, so no mutant was judged: " + f.Baseline.Problem
		p.Stryker, p.ElementsJS = nil, ""
		return p, nil
	}
	p.Lead = fmt.Sprintf("%d of %d mutants of %s's flags are load-bearing, %d survived, %d unviable.", t.LoadBearing, t.Mutants, f.Profile, t.Survived, t.Unviable)
	var bullets []string
	for _, m := range f.Mutants {
		g := f.Group(m.Groups[0])
		line := fmt.Sprintf("#%d %s (%s, line %s): %s", g.Index, g.Text(), m.Operator, f.line(g), f.verdictText(m))
		if len(m.Killed) > 0 {
			line += "; escaped " + strings.Join(m.Killed, ", ")
		}
		bullets = append(bullets, line)
	}
	p.Parts = []pagePart{{Heading: "Flags of " + f.Profile, Bullets: bullets}}
	return p, nil
}
