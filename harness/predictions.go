package harness

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"sandboxlab/mutants"
	"sandboxlab/verdict"
)

// Predictions is predictions.yaml.
type Predictions struct {
	Version  int          `yaml:"version"`
	Baseline Baseline     `yaml:"baseline"`
	Defects  []Prediction `yaml:"defects"`

	// u is the universe the file was checked against: the suites of its
	// ids, and the defects to run.
	u Universe
}

// Baseline is what the correct sandbox should do.
type Baseline struct {
	// Attacks maps each attack to the first level that stops it (and every
	// level above); 0 means stopped everywhere.
	Attacks map[string]int `yaml:"attacks"`
}

// Prediction is what one defect should do.
type Prediction struct {
	ID      Name   `yaml:"id"`
	Summary string `yaml:"summary"`
	// Checks are the ids of the checks predicted to fail.
	Checks []Name `yaml:"checks"`
	// Attacks are the attack cells (attack@L<n>) predicted to escape.
	Attacks []Name `yaml:"attacks"`
	// Known records a divergence already understood.
	Known *Known `yaml:"known"`
}

// Known is a divergence between prediction and reality that is understood.
// It names the outcome the checks really have, the attack cells whose
// prediction was wrong (predicted but stopped, or escaped unpredicted), or
// both, and why.
type Known struct {
	// Outcome is the checks' real outcome ("" when they went as predicted).
	Outcome verdict.Outcome `yaml:"outcome"`
	// Attacks are the attack cells that went against the prediction.
	Attacks []Name `yaml:"attacks"`
	Why     string `yaml:"why"`
}

// ExpectedOutcome is the checks' outcome once the known divergence is
// taken into account.
func (k *Known) ExpectedOutcome() verdict.Outcome {
	if k == nil || k.Outcome == "" {
		return verdict.Exact
	}
	return k.Outcome
}

// Cells returns the known attack cells as strings.
func (k *Known) Cells() []string {
	if k == nil {
		return nil
	}
	return values(k.Attacks)
}

// Name is a string that remembers the line it was read from, so that
// errors about it can point there.
type Name struct {
	Value string
	Line  int
}

// UnmarshalYAML keeps the line.
func (n *Name) UnmarshalYAML(node *yaml.Node) error {
	if node.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a name, found a %s", node.Line, kindName(node.Kind))
	}
	n.Value, n.Line = node.Value, node.Line
	return nil
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "value"
}

// Universe lists the ids a predictions file may name, and their suites.
type Universe struct {
	Checks  []string
	Attacks []string
	Levels  int
	// CheckSuites and AttackSuites give the suite of each check and
	// attack; an id they lack is the course's.
	CheckSuites  map[string]verdict.Suite
	AttackSuites map[string]verdict.Suite
	// Touches gives, for the checks and attacks that declare them, the
	// layers of the policy their verdicts can depend on (checks.Check's
	// and attacks.Info's Touches); an id it lacks may depend on any.
	Touches map[string][]string
	// Defects are the planted defects, each of which must be predicted
	// (nil: mutants.All). The runner runs these.
	Defects []mutants.Defect
}

// defects returns the universe's defects.
func (u *Universe) defects() []mutants.Defect {
	if u.Defects == nil {
		return mutants.All
	}
	return u.Defects
}

// Planted returns the planted defects the predictions are about, in
// registry order.
func (p *Predictions) Planted() []mutants.Defect { return p.u.defects() }

// Defect returns the planted defect with the given id.
func (p *Predictions) Defect(id string) (mutants.Defect, error) {
	for _, d := range p.u.defects() {
		if string(d.ID) == id {
			return d, nil
		}
	}
	return mutants.Defect{}, fmt.Errorf("%w %q", mutants.ErrUnknown, id)
}

// CheckSuite returns the suite of check id.
func (p *Predictions) CheckSuite(id string) verdict.Suite { return p.u.CheckSuites[id].OrCourse() }

// AttackSuite returns the suite of attack id.
func (p *Predictions) AttackSuite(id string) verdict.Suite { return p.u.AttackSuites[id].OrCourse() }

// Members reports whether the universe has a defect, a check or an
// attack of suite s.
func (p *Predictions) Members(s verdict.Suite) bool {
	for _, d := range p.u.defects() {
		if d.Suite.OrCourse() == s {
			return true
		}
	}
	for _, c := range p.u.Checks {
		if p.CheckSuite(c) == s {
			return true
		}
	}
	for _, a := range p.u.Attacks {
		if p.AttackSuite(a) == s {
			return true
		}
	}
	return false
}

// ParsePredictions decodes a predictions file strictly: unknown fields,
// unknown or duplicate ids, malformed cells and missing defects are errors
// that name the line.
func ParsePredictions(data []byte, u Universe) (*Predictions, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var p Predictions
	if err := dec.Decode(&p); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the predictions file is empty")
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("the predictions file holds more than one YAML document")
	}
	if p.Version != 1 {
		return nil, fmt.Errorf("version %d: want 1", p.Version)
	}
	p.u = u
	if err := p.validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

func (p *Predictions) validate() error {
	v := &validator{p: p, u: p.u, checks: set(p.u.Checks), attacks: set(p.u.Attacks)}
	v.baseline(p.Baseline)
	seen := map[string]int{}
	for _, d := range p.Defects {
		def, err := p.Defect(d.ID.Value)
		if err != nil {
			v.fail(d.ID.Line, "unknown defect %q", d.ID.Value)
		}
		if first, dup := seen[d.ID.Value]; dup {
			v.fail(d.ID.Line, "defect %s is predicted twice (first on line %d)", d.ID.Value, first)
		}
		seen[d.ID.Value] = d.ID.Line
		// An unknown defect's suite is unknown: its ids are checked
		// against no suite.
		v.defect(d, def.Suite.OrCourse(), err == nil)
	}
	for _, d := range p.u.defects() {
		if _, ok := seen[string(d.ID)]; !ok {
			v.errs = append(v.errs, fmt.Sprintf("defect %s has no prediction", d.ID))
		}
	}
	if len(v.errs) > 0 {
		return fmt.Errorf("predictions: %s", strings.Join(v.errs, "; "))
	}
	return nil
}

// validator collects every error of a predictions file, each naming its
// line where it has one.
type validator struct {
	p               *Predictions
	u               Universe
	checks, attacks map[string]bool
	errs            []string
}

func (v *validator) fail(line int, format string, args ...any) {
	v.errs = append(v.errs, fmt.Sprintf("line %d: %s", line, fmt.Sprintf(format, args...)))
}

// baseline checks that every attack, and only known ones, has a first
// stopping level in range.
func (v *validator) baseline(b Baseline) {
	for a, lvl := range b.Attacks {
		if !v.attacks[a] {
			v.errs = append(v.errs, fmt.Sprintf("baseline: unknown attack %q (known: %s)", a, strings.Join(v.u.Attacks, ", ")))
		} else if lvl < 0 || lvl >= v.u.Levels {
			v.errs = append(v.errs, fmt.Sprintf("baseline: %s: level %d out of 0..%d", a, lvl, v.u.Levels-1))
		} else if s := v.p.AttackSuite(a); !s.HasLevel(lvl) {
			v.errs = append(v.errs, fmt.Sprintf("baseline: %s: level %d, which the %s suite's matrix does not have", a, lvl, s))
		}
	}
	for _, a := range v.u.Attacks {
		if _, ok := b.Attacks[a]; !ok {
			v.errs = append(v.errs, fmt.Sprintf("baseline: attack %s has no first stopping level", a))
		}
	}
}

// defect checks one prediction's checks, cells and known divergence. A
// defect's run is judged by the checks and attacks of its own suite only,
// so naming another suite's could never come true: when the defect is
// known (suited), each id must be of its suite.
func (v *validator) defect(d Prediction, suite verdict.Suite, suited bool) {
	id := d.ID.Value
	dupCheck := map[string]bool{}
	for _, c := range d.Checks {
		if !v.checks[c.Value] {
			v.fail(c.Line, "%s: unknown check %q", id, c.Value)
		} else if s := v.p.CheckSuite(c.Value); suited && s != suite {
			v.fail(c.Line, "%s: check %s is of the %s suite, and a %s defect is judged by its own suite's checks only", id, c.Value, s, suite)
		}
		if dupCheck[c.Value] {
			v.fail(c.Line, "%s: check %s listed twice", id, c.Value)
		}
		dupCheck[c.Value] = true
	}
	dupCell := map[string]bool{}
	for _, c := range d.Attacks {
		cell, lvl, ok := levelCell(c.Value)
		switch {
		case !ok:
			v.fail(c.Line, "%s: %q is not an attack cell (want attack@L<level>)", id, c.Value)
		case !v.attacks[cell.Attack]:
			v.fail(c.Line, "%s: unknown attack %q", id, cell.Attack)
		case lvl >= v.u.Levels:
			v.fail(c.Line, "%s: level %d out of 0..%d", id, lvl, v.u.Levels-1)
		case suited && v.p.AttackSuite(cell.Attack) != suite:
			v.fail(c.Line, "%s: attack %s is of the %s suite, and a %s defect is judged by its own suite's attacks only", id, cell.Attack, v.p.AttackSuite(cell.Attack), suite)
		case !v.p.AttackSuite(cell.Attack).HasLevel(lvl):
			v.fail(c.Line, "%s: %s: the %s suite's matrix has no level %d", id, c.Value, v.p.AttackSuite(cell.Attack), lvl)
		case dupCell[c.Value]:
			v.fail(c.Line, "%s: cell %s listed twice", id, c.Value)
		}
		dupCell[c.Value] = true
	}
	if d.Known != nil {
		v.known(id, d.ID.Line, d.Known, suite, suited)
	}
}

// known checks a known divergence: what it names, and that it says why.
func (v *validator) known(id string, line int, k *Known, suite verdict.Suite, suited bool) {
	if k.Outcome == "" && len(k.Attacks) == 0 {
		v.fail(line, "%s: a known divergence names an outcome, attack cells or both", id)
	}
	if k.Outcome != "" && !slices.Contains(verdict.KnownOutcomes, k.Outcome) {
		v.fail(line, "%s: known outcome %q (want one of %s)", id, k.Outcome, knownOutcomeList())
	}
	for _, c := range k.Attacks {
		cell, lvl, ok := levelCell(c.Value)
		switch s := v.p.AttackSuite(cell.Attack); {
		case !ok || !v.attacks[cell.Attack]:
			v.fail(c.Line, "%s: known %q is not an attack cell", id, c.Value)
		case suited && s != suite:
			v.fail(c.Line, "%s: known %s: attack %s is of the %s suite, and a %s defect is judged by its own suite's attacks only", id, c.Value, cell.Attack, s, suite)
		case !s.HasLevel(lvl):
			v.fail(c.Line, "%s: known %s: the %s suite's matrix has no level %d", id, c.Value, s, lvl)
		}
	}
	if strings.TrimSpace(k.Why) == "" {
		v.fail(line, "%s: a known divergence needs its reason (why)", id)
	}
}

// Lookup returns the prediction for defect id.
func (p *Predictions) Lookup(id string) *Prediction {
	for i := range p.Defects {
		if p.Defects[i].ID.Value == id {
			return &p.Defects[i]
		}
	}
	return nil
}

// CheckIDs returns the predicted checks as strings.
func (d *Prediction) CheckIDs() []string { return values(d.Checks) }

// Cells returns the predicted attack cells as strings.
func (d *Prediction) Cells() []string { return values(d.Attacks) }

func values(ns []Name) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Value
	}
	return out
}

func set(ss []string) map[string]bool {
	m := make(map[string]bool, len(ss))
	for _, s := range ss {
		m[s] = true
	}
	return m
}

func knownOutcomeList() string {
	names := make([]string, len(verdict.KnownOutcomes))
	for i, o := range verdict.KnownOutcomes {
		names[i] = string(o)
	}
	return strings.Join(names, ", ")
}

// levelCell reads an attack cell whose column is a level: predictions
// are about the sandbox's own levels.
func levelCell(s string) (cell verdict.Cell, level int, ok bool) {
	cell, err := verdict.ParseCell(s)
	if err != nil {
		return cell, 0, false
	}
	level, ok = cell.Level()
	return cell, level, ok
}
