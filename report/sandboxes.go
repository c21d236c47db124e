package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"sandboxlab/verdict"
)

// A cell of the attack × sandbox matrix is stopped (the host saw no
// evidence of the attack), escaped (it saw the evidence), or n/a (the
// attack was not judged under that sandbox, and the cell's evidence says
// why; it never counts as stopped): the heat map's CellState words.

// Sandbox is one column of the attack × sandbox matrix: one of
// sandboxlab's levels, or another sandbox run through a profile.
type Sandbox struct {
	// Name is the column's name: sandboxlab:L<n>, a profile's name, or
	// custom.
	Name string `json:"name"`
	// Spec is the name as given on the command line (a custom prefix in
	// full).
	Spec string `json:"spec"`
	// About says what the sandbox is and where its profile comes from.
	About string `json:"about,omitempty"`
	// Command is the profile's command prefix, placeholders unexpanded
	// (none for sandboxlab's levels).
	Command []string `json:"command,omitempty"`
	// Skipped says why the column did not run (the sandbox is not
	// installed, or it did not run the harness's probe); "" when it ran.
	Skipped string `json:"skipped,omitempty"`
	// HostRoot says the program had host root privileges under it (uid 0
	// in the host's user namespace): only the attacks harmless by
	// construction ran, the others are n/a.
	HostRoot bool `json:"host_root,omitempty"`
	// Held says how the harness held each run: a control group of its
	// own, or its process group and token (empty for sandboxlab's levels,
	// which hold their own runs).
	Held string `json:"held,omitempty"`
	// WatchdogMS is the harness's own bound on each run, in milliseconds
	// (0 for sandboxlab's levels, which bound their own runs).
	WatchdogMS int64 `json:"watchdog_ms,omitempty"`
	// StartMS is how long the harness's probe took under it, start to
	// end: what starting the sandbox costs a short program.
	StartMS int64 `json:"start_ms,omitempty"`
	// MS is how long the column took.
	MS int64 `json:"ms"`
	// Source is where the profile is written, when known (its text left
	// out): SARIF locates the column's escapes there.
	Source *ProfileSource `json:"source,omitempty"`
}

// SandboxCell is one attack under one sandbox. It carries what a grid of
// any kind needs: the state, the mechanism and the evidence.
type SandboxCell struct {
	// Attack is the attack's id; Sandbox the column's name.
	Attack  string `json:"attack"`
	Sandbox string `json:"sandbox"`
	// State is stopped, escaped or n/a.
	State CellState `json:"state"`
	// Mechanism names what stopped the attack, where the host could tell
	// ("" when it escaped, when it is n/a, or when the host saw the attack
	// stopped but could not name what stopped it).
	Mechanism string `json:"mechanism,omitempty"`
	// Evidence says briefly what the host saw, or why the cell is n/a.
	Evidence string `json:"evidence"`
	// MS is how long the cell took, in milliseconds.
	MS int64 `json:"ms"`
}

// Name is the cell's id: attack@sandbox.
func (c SandboxCell) Name() string { return verdict.Cell{Attack: c.Attack, Column: c.Sandbox}.String() }

// Sandboxes is the report of 'sandboxlab attack --sandbox': the same
// attacks under several sandboxes, side by side, each cell judged by the
// same host-side evidence.
type Sandboxes struct {
	// Identity says who ran the matrix.
	Identity Identity `json:"identity"`
	// Defect is the planted defect that was active in sandboxlab's own
	// levels ("" for the correct sandbox).
	Defect string `json:"defect,omitempty"`
	// Attacks are the rows, in matrix order; Suites maps each to its
	// suite.
	Attacks []string                 `json:"attacks"`
	Suites  map[string]verdict.Suite `json:"suites,omitempty"`
	// Sandboxes are the columns, in the order given.
	Sandboxes []Sandbox `json:"sandboxes"`
	// Cells are the verdicts; a skipped column has none.
	Cells []SandboxCell `json:"cells"`
	// Escapes says, for each attack, what its escape is (SARIF's rules).
	Escapes map[string]string `json:"escapes,omitempty"`
}

// Cell returns the cell of attack under sandbox, if there is one.
func (s *Sandboxes) Cell(attack, sandbox string) (SandboxCell, bool) {
	for _, c := range s.Cells {
		if c.Attack == attack && c.Sandbox == sandbox {
			return c, true
		}
	}
	return SandboxCell{}, false
}

// SuiteOf returns the suite of attack.
func (s *Sandboxes) SuiteOf(attack string) verdict.Suite { return s.Suites[attack].OrCourse() }

// Count is how many of a column's cells say each state.
type Count struct {
	Stopped, Escaped, NotApplicable int
}

// Count counts the cells of sandbox.
func (s *Sandboxes) Count(sandbox string) Count {
	var n Count
	for _, c := range s.Cells {
		if c.Sandbox != sandbox {
			continue
		}
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

// cellText is a matrix cell: escaped, n/a, the mechanism, or stopped when
// the host could not name it; skipped for a column that did not run.
func cellText(c SandboxCell, ok bool) string {
	switch {
	case !ok:
		return "skipped"
	case c.State == Stopped && c.Mechanism != "":
		return c.Mechanism
	}
	return string(c.State)
}

// Tables renders the matrix (one row per attack, one column per
// sandbox), then one line per sandbox (what it is, its counts, how the
// harness held it), then every cell's evidence by sandbox. Each suite's
// attacks have a matrix of their own: the course's first, then each other
// suite's under its name.
func (s *Sandboxes) Tables(w io.Writer, md bool) error {
	p := newPrinter(w, md)
	header := []string{"attack"}
	for _, sb := range s.Sandboxes {
		header = append(header, sb.Name)
	}
	for i, su := range s.suites() {
		if i > 0 {
			p.printf("\n")
		}
		if !isCourse(su) {
			p.heading(suiteWord(su) + " suite")
		}
		var rows [][]string
		for _, at := range s.Attacks {
			if s.SuiteOf(at) != su {
				continue
			}
			row := []string{at}
			for _, sb := range s.Sandboxes {
				c, ok := s.Cell(at, sb.Name)
				row = append(row, cellText(c, ok))
			}
			rows = append(rows, row)
		}
		p.table(header, rows)
	}
	p.printf("A cell names what stopped the attack under that sandbox (stopped: the host saw it stopped but could\n")
	p.printf("not name what did), or says escaped, or n/a: not judged there, never counted as stopped.\n")
	defect := ""
	if s.Defect != "" {
		defect = " with defect " + s.Defect + " in sandboxlab's levels"
	}
	p.printf("%d cells: %d escaped, %d n/a%s (%s).\n\n", len(s.Cells), s.escapedCount(), s.naCount(), defect, s.Identity.who())

	p.heading("Sandboxes")
	var rows [][]string
	for _, sb := range s.Sandboxes {
		n := s.Count(sb.Name)
		counts := fmt.Sprintf("%d stopped, %d escaped, %d n/a", n.Stopped, n.Escaped, n.NotApplicable)
		if sb.Skipped != "" {
			counts = "skipped: " + sb.Skipped
		}
		rows = append(rows, []string{sb.Name, counts, s.runNote(sb), strconv.FormatInt(sb.MS, 10), sb.about()})
	}
	p.table([]string{"sandbox", "cells", "runs", "ms", "what it is"}, rows)

	p.heading("Evidence")
	for _, sb := range s.Sandboxes {
		if sb.Skipped != "" {
			continue
		}
		p.printf("%s:\n%s", sb.Name, para(md))
		for _, at := range s.Attacks {
			c, ok := s.Cell(at, sb.Name)
			if !ok {
				continue
			}
			state := string(c.State)
			if c.Mechanism != "" {
				state += " (" + c.Mechanism + ")"
			}
			p.printf("- %s: %s: %s\n", at, state, strings.ReplaceAll(c.Evidence, "\n", " "))
		}
		p.printf("\n")
	}
	return p.err
}

// about is what the sandbox is, with its command for a custom prefix.
func (sb Sandbox) about() string {
	if len(sb.Command) > 0 && (sb.About == "" || strings.HasPrefix(sb.Spec, "custom:")) {
		return strings.TrimSpace(sb.About + ": " + strings.Join(sb.Command, " "))
	}
	return sb.About
}

// runNote says how the sandbox's runs went: who the program was, how the
// harness held and bounded it, what a start cost.
func (s *Sandboxes) runNote(sb Sandbox) string {
	var parts []string
	if sb.HostRoot {
		parts = append(parts, "the program had host root privileges: only the attacks harmless by construction ran")
	}
	if sb.Held != "" {
		parts = append(parts, "held by "+sb.Held)
	}
	if sb.WatchdogMS > 0 {
		parts = append(parts, fmt.Sprintf("harness watchdog %d ms", sb.WatchdogMS))
	}
	if sb.StartMS > 0 {
		parts = append(parts, fmt.Sprintf("probe %d ms", sb.StartMS))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "; ")
}

func (s *Sandboxes) escapedCount() int {
	n := 0
	for _, c := range s.Cells {
		if c.State == Escaped {
			n++
		}
	}
	return n
}

func (s *Sandboxes) naCount() int {
	n := 0
	for _, c := range s.Cells {
		if c.State == NotApplicable {
			n++
		}
	}
	return n
}

// suites returns the suites of the attacks, in report order (the
// course's when there are none).
func (s *Sandboxes) suites() []verdict.Suite {
	var ss []verdict.Suite
	for _, at := range s.Attacks {
		ss = append(ss, s.SuiteOf(at))
	}
	out := presentSuites(ss)
	if len(out) == 0 {
		out = []verdict.Suite{verdict.Course}
	}
	return out
}

// JUnit returns one test suite per sandbox, one test case per attack: an
// escape is a failure (the sandbox let it through), n/a and every case of
// a skipped sandbox are skipped with the reason, a stop passes. Suites
// are named sandbox.<name>; a case's class is sandboxlab.sandbox.<name>,
// with the attack's suite appended for another suite than the course's.
func (s *Sandboxes) JUnit() *TestSuites {
	var out []TestSuite
	for _, sb := range s.Sandboxes {
		var cases []TestCase
		for _, at := range s.Attacks {
			tc := TestCase{Name: at, ClassName: junitName("sandboxlab.sandbox."+sb.Name, s.SuiteOf(at)), Time: seconds(0)}
			c, ok := s.Cell(at, sb.Name)
			switch {
			case !ok:
				tc.Skipped = &Skipped{Message: "the sandbox did not run: " + sb.Skipped}
			case c.State == Escaped:
				tc.Time = seconds(c.MS)
				tc.Failure = &Problem{Message: "escaped: " + c.Evidence, Type: "escape", Text: "evidence: " + c.Evidence + "\n"}
			case c.State == NotApplicable:
				tc.Time = seconds(c.MS)
				tc.Skipped = &Skipped{Message: c.Evidence}
			default:
				tc.Time = seconds(c.MS)
				by := c.Mechanism
				if by == "" {
					by = "a mechanism the host could not name"
				}
				tc.SystemOut = "stopped by " + by + "\nevidence: " + c.Evidence + "\n"
			}
			cases = append(cases, tc)
		}
		props := withDefect(s.Identity.properties(), s.Defect)
		props = append(props, Property{"sandbox", sb.Spec})
		if sb.HostRoot {
			props = append(props, Property{"host_root", "true"})
		}
		if sb.Held != "" {
			props = append(props, Property{"held", sb.Held})
		}
		out = append(out, newSuite("sandbox."+sb.Name, sb.MS, props, cases))
	}
	return newSuites("sandboxlab attack --sandbox", out...)
}
