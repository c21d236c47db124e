package report

import (
	"fmt"
	"slices"
	"strings"

	"sandboxlab/verdict"
)

// The report of 'sandboxlab mutate --sandbox': a reviewer's sandbox (a
// profile's command line) mutated flag group by flag group, each mutant
// judged by the attacks the unmutated profile stops.

// FlagVerdict is what became of one mutant.
type FlagVerdict string

const (
	// LoadBearing: an attack the unmutated profile stops got through.
	LoadBearing FlagVerdict = "load-bearing"
	// Survived: every attack the unmutated profile stops was stopped
	// again (or was n/a).
	Survived FlagVerdict = "survived"
	// Unviable: the sandbox no longer ran the harness's harmless probe.
	Unviable FlagVerdict = "unviable"
	// FlagError: the run gave no verdict (the harness failed, or hung).
	FlagError FlagVerdict = "error"
)

// Survivor classes, for a survived mutant once the pairs have run.
const (
	// Masked: mutated together with another flag (a survivor, or a
	// load-bearing flag), an attack got through that neither let through
	// alone: the two guard the same thing.
	Masked = "masked"
	// Untested: every pair with it survived too: no attack of the
	// battery tests what it guards, or what hides it is no flag of the
	// profile (the tool's own defaults, the host).
	Untested = "untested"
	// Unclassified: no pair with it was killed, and not every pair it is
	// in gave a verdict (one was unviable, or hung, or the bound left it
	// out); or the pairs were not run.
	Unclassified = "unclassified"
)

// SourceSpan is where something is written: lines and columns from 1,
// columns in UTF-16 code units, the end exclusive.
type SourceSpan struct {
	StartLine   int `json:"start_line"`
	StartColumn int `json:"start_column"`
	EndLine     int `json:"end_line"`
	EndColumn   int `json:"end_column"`
}

// IsZero reports whether the span says nothing.
func (s *SourceSpan) IsZero() bool { return s == nil || s.StartLine == 0 }

// ProfileSource is the file a profile is written in: the profiles file
// (YAML), or a custom prefix given on the command line, kept as a file
// of one line.
type ProfileSource struct {
	// File is its path as reports name it (relative to the repository
	// where it can be).
	File string `json:"file"`
	// Language is yaml or shell (a custom prefix).
	Language string `json:"language"`
	// Text is the file's content (left out where only the location
	// matters: the attack × sandbox matrix).
	Text string `json:"text,omitempty"`
	// Entry is the line of the profile's entry; Command spans its
	// command.
	Entry   int         `json:"entry"`
	Command *SourceSpan `json:"command,omitempty"`
}

// FlagGroup is one group of the profile's command.
type FlagGroup struct {
	Index int      `json:"index"`
	Words []string `json:"words"`
	// Kind is the group's kind (argv.Kind); Fixed: no operator touches it.
	Kind  string      `json:"kind"`
	Fixed bool        `json:"fixed,omitempty"`
	At    *SourceSpan `json:"location,omitempty"`
}

// Text is the group's words, separated by spaces.
func (g FlagGroup) Text() string { return strings.Join(g.Words, " ") }

// UngroupedWord is a word the tables could not group: it stays in every
// mutant as it is.
type UngroupedWord struct {
	Word int         `json:"word"`
	Text string      `json:"text"`
	Why  string      `json:"why"`
	At   *SourceSpan `json:"location,omitempty"`
}

// FlagBaseline is the unmutated profile's column.
type FlagBaseline struct {
	// OK: the column ran (the sandbox ran the probe).
	OK bool `json:"ok"`
	// Problem says why it did not.
	Problem string        `json:"problem,omitempty"`
	Column  Sandbox       `json:"column"`
	Cells   []SandboxCell `json:"cells"`
	// Stopped are the attacks it stops (in every repeat): the only ones
	// a mutant can be killed by, and the only ones a mutant runs.
	Stopped []string `json:"stopped"`
}

// FlagMutant is one mutant (or a pair) and its verdict.
type FlagMutant struct {
	ID string `json:"id"`
	// Groups are the indexes of the groups it edits; Operator its
	// operator (two joined by '+' for a pair).
	Groups      []int    `json:"groups"`
	Operator    string   `json:"operator"`
	Description string   `json:"description"`
	Command     []string `json:"command"`
	// Replacement is what the group becomes (empty: removed).
	Replacement string      `json:"replacement"`
	Verdict     FlagVerdict `json:"verdict"`
	// Killed are the attacks that escaped under it and that the
	// baseline stops; Evidence is what the host saw of each.
	Killed   []string      `json:"killed"`
	Evidence []SandboxCell `json:"evidence,omitempty"`
	// NotApplicable are attacks the baseline stops that were not judged
	// under it (the program did not start, say).
	NotApplicable []string `json:"not_applicable,omitempty"`
	// Unviable is what the probe printed when the sandbox did not run
	// it; Error why there is no verdict.
	Unviable string `json:"unviable,omitempty"`
	Error    string `json:"error,omitempty"`
	// Retried is what the probe printed when the first run did not start
	// the sandbox and a second did: the verdict is the second's.
	Retried string `json:"retried,omitempty"`
	// Class is, for a survivor, masked, untested or unclassified; With
	// the survivors it was killed in a pair with (for a pair: the two
	// survivors it combines).
	Class string   `json:"class,omitempty"`
	With  []string `json:"with,omitempty"`
	// CellRuns counts its cell runs (repeats included); MS its time.
	CellRuns int   `json:"cell_runs"`
	MS       int64 `json:"ms"`
}

// FlagFlake is a cell whose state changed between repeats.
type FlagFlake struct {
	Mutant string   `json:"mutant,omitempty"` // "" for the baseline
	Attack string   `json:"attack"`
	States []string `json:"states"`
}

// FlagRun says how the run was made, and what selection saved.
type FlagRun struct {
	Shard  string   `json:"shard,omitempty"`
	Repeat int      `json:"repeat"`
	Build  string   `json:"build,omitempty"`
	Only   []string `json:"only,omitempty"`
	// CellRuns are the mutants' cell runs (pairs included);
	// CellRunsUnselected what they would have been had every attack of
	// the baseline's column run for every mutant; BaselineCellRuns the
	// baseline's own.
	CellRuns           int `json:"cell_runs"`
	CellRunsUnselected int `json:"cell_runs_unselected"`
	BaselineCellRuns   int `json:"baseline_cell_runs"`
	// Pairs: --pairs ran; MaxPairs its bound, PairsLeftOut the pairs
	// of survivors the bound left out.
	Pairs        bool  `json:"pairs"`
	MaxPairs     int   `json:"max_pairs,omitempty"`
	PairsLeftOut int   `json:"pairs_left_out,omitempty"`
	PairsMS      int64 `json:"pairs_ms,omitempty"`
}

// FlagMutation is the report of 'sandboxlab mutate --sandbox'.
type FlagMutation struct {
	Identity Identity `json:"identity"`
	// Profile is the profile's name (custom for a prefix); Spec the
	// --sandbox name given; About what it is.
	Profile string `json:"profile"`
	Spec    string `json:"spec"`
	About   string `json:"about,omitempty"`
	// Tool is the arity table the command was read with ("groups": the
	// profile's own; "": none).
	Tool      string          `json:"tool"`
	Command   []string        `json:"command"`
	Source    *ProfileSource  `json:"source,omitempty"`
	Groups    []FlagGroup     `json:"groups"`
	Ungrouped []UngroupedWord `json:"ungrouped"`
	Baseline  FlagBaseline    `json:"baseline"`
	Mutants   []FlagMutant    `json:"mutants"`
	Pairs     []FlagMutant    `json:"pairs,omitempty"`
	Flaky     []FlagFlake     `json:"flaky,omitempty"`
	Run       FlagRun         `json:"run"`
	// Escapes says, for each attack of the battery, what its escape is.
	Escapes map[string]string `json:"escapes,omitempty"`
	MS      int64             `json:"ms"`
}

// FlagTally counts the mutants by verdict, and the survivors by class.
type FlagTally struct {
	Mutants, LoadBearing, Survived, Unviable, Errors int
	Masked, Untested, Unclassified                   int
	PairsKilled                                      int
}

// Tally counts the mutants.
func (f *FlagMutation) Tally() FlagTally {
	var t FlagTally
	t.Mutants = len(f.Mutants)
	for _, m := range f.Mutants {
		switch m.Verdict {
		case LoadBearing:
			t.LoadBearing++
		case Survived:
			t.Survived++
			switch m.Class {
			case Masked:
				t.Masked++
			case Untested:
				t.Untested++
			default:
				t.Unclassified++
			}
		case Unviable:
			t.Unviable++
		default:
			t.Errors++
		}
	}
	for _, p := range f.Pairs {
		if p.Verdict == LoadBearing {
			t.PairsKilled++
		}
	}
	return t
}

// Group returns the group of index i.
func (f *FlagMutation) Group(i int) FlagGroup {
	for _, g := range f.Groups {
		if g.Index == i {
			return g
		}
	}
	return FlagGroup{Index: i}
}

// Span returns the span of a mutant's first group, or of the profile's
// command when that is not known.
func (f *FlagMutation) Span(m FlagMutant) *SourceSpan {
	if len(m.Groups) > 0 {
		if g := f.Group(m.Groups[0]); !g.At.IsZero() {
			return g.At
		}
	}
	if f.Source != nil {
		return f.Source.Command
	}
	return nil
}

// verdictText words a mutant's verdict for the tables: a survivor with
// its class and the flags it shares its guard with.
func (f *FlagMutation) verdictText(m FlagMutant) string {
	if m.Verdict != Survived || m.Class == "" {
		return string(m.Verdict)
	}
	switch m.Class {
	case Masked:
		var with []string
		for _, id := range m.With {
			if o, ok := f.Mutant(id); ok {
				with = append(with, fmt.Sprintf("#%d %s", o.Groups[0], f.Group(o.Groups[0]).Text()))
			}
		}
		return "survived: masked by " + strings.Join(with, ", ")
	case Untested:
		return "survived: untested"
	}
	return "survived"
}

// Mutant finds a mutant by id.
func (f *FlagMutation) Mutant(id string) (FlagMutant, bool) {
	i := slices.IndexFunc(f.Mutants, func(m FlagMutant) bool { return m.ID == id })
	if i < 0 {
		return FlagMutant{}, false
	}
	return f.Mutants[i], true
}

// ExitCode is the run's exit code: 4 when the unmutated profile's column
// did not run, 5 when a cell flaked, 0 otherwise (a survivor is a
// finding, not a failure of the run).
func (f *FlagMutation) ExitCode() int {
	switch {
	case !f.Baseline.OK:
		return verdict.ExitBaseline
	case len(f.Flaky) > 0:
		return verdict.ExitFlaky
	}
	return verdict.ExitOK
}
