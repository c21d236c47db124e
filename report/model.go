package report

import "sandboxlab/verdict"

// Identity says who ran a report: host identity matters (root can mount at
// L0–L2; a fixture's owner decides what the uid mapping stops).
type Identity struct {
	// UID is the harness's effective uid.
	UID int `json:"uid"`
	// Root is true when the harness ran as root in the initial user namespace.
	Root bool `json:"root"`
	// ProgramUID is the host uid the sandboxed programs ran as.
	ProgramUID int `json:"program_uid"`
}

// Check is the verdict of one promise check.
type Check struct {
	// ID is the check's stable id, as predictions.yaml names it.
	ID string `json:"id"`
	// Suite is the suite the check belongs to ("" only in a report from
	// before suites, all of whose checks are the course's).
	Suite verdict.Suite `json:"suite,omitempty"`
	// Promise is the promise it tests, in one sentence.
	Promise string `json:"promise"`
	// Level is the preset its policy is derived from.
	Level int `json:"level"`
	// Passed is the verdict.
	Passed bool `json:"passed"`
	// Evidence says briefly what the host saw.
	Evidence string `json:"evidence"`
	// MS is how long the check took, in milliseconds.
	MS int64 `json:"ms"`
}

// Checks is the report of 'sandboxlab check'.
type Checks struct {
	// Identity says who ran the checks.
	Identity Identity `json:"identity"`
	// Defect is the planted defect that was active ("" for the correct sandbox).
	Defect string `json:"defect,omitempty"`
	// Checks are the verdicts, in the order they ran.
	Checks []Check `json:"checks"`
	// Passed and Failed count the verdicts (see Tally).
	Passed int `json:"passed"`
	Failed int `json:"failed"`
}

// Tally fills Passed and Failed from Checks.
func (c *Checks) Tally() {
	c.Passed, c.Failed = 0, 0
	for _, ch := range c.Checks {
		if ch.Passed {
			c.Passed++
		} else {
			c.Failed++
		}
	}
}

// FailedIDs returns the ids of the failed checks, in report order.
func (c *Checks) FailedIDs() []string {
	ids := []string{}
	for _, ch := range c.Checks {
		if !ch.Passed {
			ids = append(ids, ch.ID)
		}
	}
	return ids
}

// Cell is one attack at one level.
type Cell struct {
	// Attack is the attack's id.
	Attack string `json:"attack"`
	// Level is the preset it ran under.
	Level int `json:"level"`
	// Escaped is true when the host saw the attack's evidence.
	Escaped bool `json:"escaped"`
	// StoppedBy names the mechanism that stopped it ("" when it escaped).
	StoppedBy string `json:"stopped_by"`
	// Evidence says briefly what the host saw.
	Evidence string `json:"evidence"`
	// MS is how long the cell took, in milliseconds.
	MS int64 `json:"ms"`
	// NA says why the cell is not applicable on this host: what the
	// attack needs of the kernel is not there, so it was not run ("" for
	// a judged cell). Such a cell neither escaped nor was stopped.
	NA string `json:"na,omitempty"`
}

// Name is the cell's id as predictions.yaml writes it: attack@L<n>.
func (c Cell) Name() string { return verdict.AtLevel(c.Attack, c.Level).String() }

// Attacks is the report of 'sandboxlab attack': the attack × level matrix.
type Attacks struct {
	// Identity says who ran the matrix: root can mount at L0–L2.
	Identity Identity `json:"identity"`
	// Defect is the planted defect that was active ("" for the correct sandbox).
	Defect string `json:"defect,omitempty"`
	// Attacks and Levels give the matrix's rows and columns, in order: the
	// attacks of every suite run, and every level run. An attack has a
	// cell only at the levels its suite has (verdict.Suite.HasLevel).
	Attacks []string `json:"attacks"`
	// Suites maps each attack to its suite (nil only in a report from
	// before suites, all of whose attacks are the course's).
	Suites map[string]verdict.Suite `json:"suites,omitempty"`
	Levels []int                    `json:"levels"`
	Cells  []Cell                   `json:"cells"`
	// FirstStopped maps each attack to the first level that stopped it
	// and every level above (-1: none of the levels run). A cell that is
	// not applicable (Cell.NA) neither stops nor lets through.
	FirstStopped map[string]int `json:"first_stopped"`
	// NotApplicable maps each attack none of whose cells applies on this
	// host to the reason: it has no first stop to compare.
	NotApplicable map[string]string `json:"not_applicable,omitempty"`
	// Expected maps each attack to the first level expected to stop it on
	// the correct sandbox (the baseline of predictions.yaml). A cell that
	// escapes at or above that level is an unexpected escape: JUnit fails
	// it and the tables mark it. Nil when the producer did not say: then
	// no cell is judged.
	Expected map[string]int `json:"expected,omitempty"`
}

// Cell returns the cell for attack at level, if it was run.
func (a *Attacks) Cell(attack string, level int) (Cell, bool) {
	for _, c := range a.Cells {
		if c.Attack == attack && c.Level == level {
			return c, true
		}
	}
	return Cell{}, false
}

// SuiteOf returns the suite of attack.
func (a *Attacks) SuiteOf(attack string) verdict.Suite { return a.Suites[attack].OrCourse() }

// Summarize fills FirstStopped from Cells: the lowest level from which
// the attack is stopped at every level run that its suite has.
func (a *Attacks) Summarize() {
	a.FirstStopped = map[string]int{}
	a.NotApplicable = nil
	for _, at := range a.Attacks {
		suite := a.SuiteOf(at)
		first, judged, na := -1, false, ""
		for i := len(a.Levels) - 1; i >= 0; i-- {
			if !suite.HasLevel(a.Levels[i]) {
				continue
			}
			c, ok := a.Cell(at, a.Levels[i])
			if ok && c.NA != "" {
				na = c.NA
				continue
			}
			judged = true
			if !ok || c.Escaped {
				break
			}
			first = a.Levels[i]
		}
		a.FirstStopped[at] = first
		if !judged && na != "" {
			if a.NotApplicable == nil {
				a.NotApplicable = map[string]string{}
			}
			a.NotApplicable[at] = na
		}
	}
}

// Escaped returns the names (attack@L<n>) of the escaped cells.
func (a *Attacks) Escaped() []string {
	names := []string{}
	for _, c := range a.Cells {
		if c.Escaped {
			names = append(names, c.Name())
		}
	}
	return names
}

// UnexpectedEscape reports whether c escaped at or above the first level
// expected to stop its attack. Without an expectation for the attack it is
// false: nothing to judge against.
func (a *Attacks) UnexpectedEscape(c Cell) bool {
	want, ok := a.Expected[c.Attack]
	return ok && c.Escaped && c.Level >= want
}

// UnexpectedEscapes returns the cells that escaped at or above the level
// expected to stop them, in report order.
func (a *Attacks) UnexpectedEscapes() []Cell {
	var out []Cell
	for _, c := range a.Cells {
		if a.UnexpectedEscape(c) {
			out = append(out, c)
		}
	}
	return out
}
