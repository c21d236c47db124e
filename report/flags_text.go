package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Tables renders the per-flag table (one row per mutant: the group, its
// line, the operator, the verdict and the attacks that got through), the
// pairs, a summary, the baseline's column and the evidence.
func (f *FlagMutation) Tables(w io.Writer, md bool) error {
	p := newPrinter(w, md)
	p.heading("Flags of " + f.Profile)
	if f.About != "" {
		p.printf("%s\n\n", f.About)
	}
	if !f.Baseline.OK {
		p.printf("The unmutated profile's column did not run, so no mutant was judged: %s\n", f.Baseline.Problem)
		return p.err
	}
	var rows [][]string
	for _, m := range f.Mutants {
		g := f.Group(m.Groups[0])
		rows = append(rows, []string{strconv.Itoa(g.Index), g.Text(), f.line(g), m.Operator, f.verdictText(m), orDash(m.Killed), mutantNote(m)})
	}
	p.table([]string{"#", "flag", "line", "operator", "verdict", "escaped", "note"}, rows)
	f.pairsTable(p)
	f.summary(p)
	f.ungrouped(p)
	f.evidence(p)
	return p.err
}

// line is where a group is written ("-" when unknown).
func (f *FlagMutation) line(g FlagGroup) string {
	if g.At.IsZero() {
		return "-"
	}
	return strconv.Itoa(g.At.StartLine)
}

// mutantNote says what else there is to know of a mutant: what the
// probe printed, why there is no verdict, the attacks not judged.
func mutantNote(m FlagMutant) string {
	var parts []string
	if m.Unviable != "" {
		parts = append(parts, m.Unviable)
	}
	if m.Error != "" {
		parts = append(parts, "no verdict: "+m.Error)
	}
	if m.Retried != "" {
		parts = append(parts, "judged by a second run; the first did not start: "+m.Retried)
	}
	if len(m.NotApplicable) > 0 {
		parts = append(parts, "n/a under it: "+strings.Join(m.NotApplicable, ", "))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "; ")
}

func orDash(ids []string) string {
	if len(ids) == 0 {
		return "-"
	}
	return strings.Join(ids, ", ")
}

// pairsTable lists the pairs of survivors, killed first.
func (f *FlagMutation) pairsTable(p *printer) {
	if !f.Run.Pairs {
		return
	}
	p.subheading("Pairs: each survivor with another survivor, then with each load-bearing flag")
	if len(f.Pairs) == 0 {
		p.printf("No pair ran: no survivor, or no other flag to pair it with.\n\n")
		return
	}
	var rows [][]string
	for _, killed := range []bool{true, false} {
		for _, m := range f.Pairs {
			if (m.Verdict == LoadBearing) != killed {
				continue
			}
			var flags []string
			for _, gi := range m.Groups {
				flags = append(flags, fmt.Sprintf("#%d %s", gi, f.Group(gi).Text()))
			}
			v := string(m.Verdict)
			if killed {
				v = "killed: these two flags guard the same thing"
			}
			rows = append(rows, []string{strings.Join(flags, " + "), m.Operator, v, orDash(m.Killed)})
		}
	}
	p.table([]string{"flags", "operators", "verdict", "escaped (neither alone)"}, rows)
	if f.Run.PairsLeftOut > 0 {
		p.printf("%d pairs left out by the bound (--max-pairs %d).\n\n", f.Run.PairsLeftOut, f.Run.MaxPairs)
	}
}

// summary counts the mutants and says what selection saved.
func (f *FlagMutation) summary(p *printer) {
	t := f.Tally()
	mutable := 0
	for _, g := range f.Groups {
		if !g.Fixed {
			mutable++
		}
	}
	p.printf("%d mutants of %d flag groups (%s's table): %d load-bearing, %d survived, %d unviable", t.Mutants, mutable, toolName(f.Tool), t.LoadBearing, t.Survived, t.Unviable)
	if t.Errors > 0 {
		p.printf(", %d without a verdict", t.Errors)
	}
	p.printf(".\n")
	if f.Run.Pairs && t.Survived > 0 {
		p.printf("Survivors: %d masked (mutated with another flag, an attack got through that neither let through alone), %d untested (no pair did)", t.Masked, t.Untested)
		if t.Unclassified > 0 {
			p.printf(", %d unclassified (a pair with it was unviable, gave no verdict or was left out by the bound of %d)", t.Unclassified, f.Run.MaxPairs)
		}
		p.printf("; %d of %d pairs killed.\n", t.PairsKilled, len(f.Pairs))
	} else if t.Survived > 0 {
		p.printf("A survivor is untested or masked by another flag: --pairs tells which.\n")
	}
	saved := f.Run.CellRunsUnselected - f.Run.CellRuns
	p.printf("Selection: the mutants ran %d cells, %d without selection (only the %d attacks the unmutated profile stops can kill; %d cell runs saved); the baseline ran %d.\n",
		f.Run.CellRuns, f.Run.CellRunsUnselected, len(f.Baseline.Stopped), saved, f.Run.BaselineCellRuns)
	n := countStates(f.Baseline.Cells)
	p.printf("Baseline (%s): %d attacks stopped (%s), %d escaped, %d n/a; %d ms in all (%s).\n\n",
		strings.Join(f.Command, " "), n.Stopped, orDash(f.Baseline.Stopped), n.Escaped, n.NotApplicable, f.MS, f.Identity.who())
	for _, fl := range f.Flaky {
		who := "the baseline"
		if fl.Mutant != "" {
			who = fl.Mutant
		}
		p.printf("FLAKY: %s under %s: %s across repeats\n", fl.Attack, who, strings.Join(fl.States, ", "))
	}
}

// toolName names the arity table for people.
func toolName(tool string) string {
	switch tool {
	case "groups":
		return "the profile's own groups"
	case "":
		return "no tool"
	}
	return tool
}

func countStates(cells []SandboxCell) Count {
	var n Count
	for _, c := range cells {
		switch c.State {
		case Stopped:
			n.Stopped++
		case Escaped:
			n.Escaped++
		default:
			n.NotApplicable++
		}
	}
	return n
}

// ungrouped lists the words left as they are.
func (f *FlagMutation) ungrouped(p *printer) {
	if len(f.Ungrouped) == 0 {
		return
	}
	p.subheading("Words not grouped (kept as they are in every mutant)")
	for _, u := range f.Ungrouped {
		p.printf("- word %d %q: %s\n", u.Word, u.Text, u.Why)
	}
	p.printf("\n")
}

// evidence gives what the host saw of each escape a mutant let through.
func (f *FlagMutation) evidence(p *printer) {
	var lines []string
	for _, list := range [][]FlagMutant{f.Mutants, f.Pairs} {
		for _, m := range list {
			for _, c := range m.Evidence {
				lines = append(lines, fmt.Sprintf("- %s: %s escaped: %s\n", m.ID, c.Attack, strings.ReplaceAll(c.Evidence, "\n", " ")))
			}
		}
	}
	for _, c := range f.Baseline.Cells {
		if c.State == Escaped {
			lines = append(lines, fmt.Sprintf("- %s unmutated: %s escaped: %s\n", f.Profile, c.Attack, strings.ReplaceAll(c.Evidence, "\n", " ")))
		}
	}
	if len(lines) == 0 {
		return
	}
	p.subheading("Evidence")
	for _, l := range lines {
		p.printf("%s", l)
	}
	p.printf("\n")
}

// JUnit returns a test suite of the mutants, one case each (a survivor
// fails: a flag no attack notices; an unviable mutant is skipped with
// what it printed; no verdict is an error), and one of the pairs.
func (f *FlagMutation) JUnit() *TestSuites {
	props := []Property{{"sandbox", f.Spec}, {"command", strings.Join(f.Command, " ")}}
	cases := []TestCase{{Name: "baseline", ClassName: "sandboxlab.flags." + f.Profile, Time: seconds(f.Baseline.Column.MS)}}
	if !f.Baseline.OK {
		cases[0].Error = &Problem{Message: "the unmutated profile did not run: " + f.Baseline.Problem, Type: "baseline"}
	}
	for _, m := range f.Mutants {
		cases = append(cases, f.junitCase(m))
	}
	suites := []TestSuite{newSuite("mutate.sandbox."+f.Profile, f.MS, props, cases)}
	if len(f.Pairs) > 0 {
		var pc []TestCase
		for _, m := range f.Pairs {
			tc := TestCase{Name: m.ID, ClassName: "sandboxlab.flags." + f.Profile + ".pairs", Time: seconds(m.MS)}
			tc.SystemOut = f.verdictText(m) + ": " + m.Description + "\nescaped: " + orDash(m.Killed) + "\n"
			pc = append(pc, tc)
		}
		suites = append(suites, newSuite("mutate.sandbox."+f.Profile+".pairs", f.Run.PairsMS, props, pc))
	}
	return newSuites("sandboxlab mutate --sandbox", suites...)
}

// junitCase is one mutant as a test case.
func (f *FlagMutation) junitCase(m FlagMutant) TestCase {
	tc := TestCase{Name: m.ID, ClassName: "sandboxlab.flags." + f.Profile, Time: seconds(m.MS)}
	switch m.Verdict {
	case LoadBearing:
		tc.SystemOut = "load-bearing: " + m.Description + "\nescaped: " + strings.Join(m.Killed, ", ") + "\n"
	case Survived:
		tc.Failure = &Problem{Message: f.verdictText(m) + ": " + m.Description, Type: "survived",
			Text: "no attack the unmutated profile stops got through without it\n"}
	case Unviable:
		tc.Skipped = &Skipped{Message: "unviable: " + m.Unviable}
	default:
		tc.Error = &Problem{Message: "no verdict: " + m.Error, Type: "error"}
	}
	return tc
}
