package harness

import (
	"fmt"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab"
	"sandboxlab/mutants"
	"sandboxlab/verdict"
)

// universe is the course's: these tests judge made-up results against
// the course's 29 defects, whatever the hardening suite holds.
var universe = Universe{Checks: []string{"wall_timeout", "timeout_flag", "file_links"}, Attacks: []string{"runaway_loop", "file_api_symlink"}, Levels: 6,
	Defects: courseDefects()}

// courseDefects are the registry's course defects.
func courseDefects() []mutants.Defect {
	var out []mutants.Defect
	for _, d := range mutants.All {
		if d.Suite == verdict.Course {
			out = append(out, d)
		}
	}
	return out
}

// valid builds a predictions file for every defect; edit replaces the
// entry of one defect.
func valid(edit map[mutants.ID]string) string {
	var b strings.Builder
	b.WriteString("version: 1\nbaseline:\n  attacks:\n    runaway_loop: 1\n    file_api_symlink: 0\ndefects:\n")
	for _, d := range courseDefects() {
		if e, ok := edit[d.ID]; ok {
			b.WriteString(e)
			continue
		}
		fmt.Fprintf(&b, "  - id: %s\n    summary: s\n    checks: [wall_timeout]\n    attacks: []\n", d.ID)
	}
	return b.String()
}

func TestParsePredictionsValid(t *testing.T) {
	p, err := ParsePredictions([]byte(valid(map[mutants.ID]string{
		mutants.LinksFollowed: "  - id: links_followed\n    summary: s\n    checks: [file_links]\n    attacks: [file_api_symlink@L0, file_api_symlink@L5]\n" +
			"    known:\n      outcome: extra\n      why: because\n",
	})), universe)
	assert.NilError(t, err)
	d := p.Lookup("links_followed")
	assert.Assert(t, d != nil)
	assert.Check(t, is.DeepEqual(d.CheckIDs(), []string{"file_links"}))
	assert.Check(t, is.DeepEqual(d.Cells(), []string{"file_api_symlink@L0", "file_api_symlink@L5"}))
	assert.Check(t, is.DeepEqual(*d.Known, Known{Outcome: verdict.Extra, Why: "because"}))
	assert.Check(t, is.Equal(p.Baseline.Attacks["runaway_loop"], 1))
}

func TestParsePredictionsErrorsNameTheLine(t *testing.T) {
	entry := func(id mutants.ID, body string) map[mutants.ID]string {
		return map[mutants.ID]string{id: fmt.Sprintf("  - id: %s\n    summary: s\n%s", id, body)}
	}
	// The first defect's entry starts on line 7.
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown field", valid(entry(mutants.All[0].ID, "    checks: []\n    attacks: []\n    cheks: [x]\n")), "line 11: field cheks not found"},
		{"check id typo", valid(entry(mutants.All[0].ID, "    checks: [wall_timout]\n    attacks: []\n")), `line 9: fail_open: unknown check "wall_timout"`},
		{"bad cell", valid(entry(mutants.All[0].ID, "    checks: []\n    attacks: [runaway_loop@1]\n")), `line 10: fail_open: "runaway_loop@1" is not an attack cell`},
		{"unknown attack", valid(entry(mutants.All[0].ID, "    checks: []\n    attacks: [fork_bom@L3]\n")), `line 10: fail_open: unknown attack "fork_bom"`},
		{"duplicate check", valid(entry(mutants.All[0].ID, "    checks: [file_links, file_links]\n    attacks: []\n")), "line 9: fail_open: check file_links listed twice"},
		{"bad known outcome", valid(entry(mutants.All[0].ID, "    checks: []\n    attacks: []\n    known: {outcome: wrong, why: x}\n")), `known outcome "wrong"`},
		{"known without why", valid(entry(mutants.All[0].ID, "    checks: []\n    attacks: []\n    known: {outcome: extra}\n")), "needs its reason"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParsePredictions([]byte(c.yaml), universe)
			assert.Check(t, is.ErrorContains(err, c.want))
		})
	}
}

func TestParsePredictionsWhole(t *testing.T) {
	full := valid(nil)
	dup := full + fmt.Sprintf("  - id: %s\n    summary: again\n    checks: []\n    attacks: []\n", mutants.All[3].ID)
	_, err := ParsePredictions([]byte(dup), universe)
	assert.Check(t, is.ErrorContains(err, "defect traversal_ok is predicted twice (first on line"))

	missing := strings.Replace(full, "  - id: caps_kept\n    summary: s\n    checks: [wall_timeout]\n    attacks: []\n", "", 1)
	_, err = ParsePredictions([]byte(missing), universe)
	assert.Check(t, is.ErrorContains(err, "defect caps_kept has no prediction"))

	unknown := full + "  - id: caps_kpet\n    summary: s\n    checks: []\n    attacks: []\n"
	_, err = ParsePredictions([]byte(unknown), universe)
	assert.Check(t, is.ErrorContains(err, `unknown defect "caps_kpet"`))

	_, err = ParsePredictions(nil, universe)
	assert.Check(t, is.ErrorContains(err, "empty"))

	_, err = ParsePredictions([]byte(strings.Replace(full, "    file_api_symlink: 0\n", "", 1)), universe)
	assert.Check(t, is.ErrorContains(err, "attack file_api_symlink has no first stopping level"))

	_, err = ParsePredictions([]byte(strings.Replace(full, "version: 1", "version: 2", 1)), universe)
	assert.Check(t, is.ErrorContains(err, "version 2"))
}

func TestTheProjectPredictionsParse(t *testing.T) {
	// The ids of checks and attacks are checked by the CLI's tests, which
	// know them; here every defect must be predicted exactly once.
	_, err := ParsePredictions(sandboxlab.Predictions, Universe{Levels: 6})
	assert.Check(t, err != nil, "the empty universe must refuse the real ids")
	assert.Check(t, !strings.Contains(err.Error(), "has no prediction"), err)
	assert.Check(t, !strings.Contains(err.Error(), "predicted twice"), err)
}

// TestParsePredictionsSuites: a defect is judged by its own suite's
// checks and attacks only, so a prediction naming another suite's is
// refused, as is a cell at a level its attack's suite does not have.
func TestParsePredictionsSuites(t *testing.T) {
	p, err := ParsePredictions([]byte(valid2(nil)), universe2)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(p.CheckSuite("vault_sealed"), verdict.Hardening))
	assert.Check(t, is.Equal(p.AttackSuite("runaway_loop"), verdict.Course))
	d, err := p.Defect(vaultOpen)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(d.Suite, verdict.Hardening))
	assert.Check(t, p.Members(verdict.Hardening))

	hard := func(body string) map[mutants.ID]string {
		return map[mutants.ID]string{vaultOpen: "  - id: vault_open\n    summary: s\n" + body}
	}
	course := func(body string) map[mutants.ID]string {
		return map[mutants.ID]string{mutants.All[0].ID: fmt.Sprintf("  - id: %s\n    summary: s\n%s", mutants.All[0].ID, body)}
	}
	for _, c := range []struct {
		name string
		edit map[mutants.ID]string
		want string
	}{
		{"course check for a hardening defect", hard("    checks: [vault_sealed, wall_timeout]\n    attacks: []\n"),
			"vault_open: check wall_timeout is of the course suite, and a hardening defect is judged by its own suite's checks only"},
		{"hardening check for a course defect", course("    checks: [vault_sealed]\n    attacks: []\n"),
			"line 10: fail_open: check vault_sealed is of the hardening suite, and a course defect is judged by its own suite's checks only"},
		{"hardening cell for a course defect", course("    checks: []\n    attacks: [vault_raid@L6]\n"),
			"fail_open: attack vault_raid is of the hardening suite, and a course defect is judged by its own suite's attacks only"},
		{"course cell at L6", map[mutants.ID]string{mutants.All[0].ID: "  - id: fail_open\n    summary: s\n    checks: []\n    attacks: [runaway_loop@L6]\n"},
			"fail_open: runaway_loop@L6: the course suite's matrix has no level 6"},
		{"known cell of another suite", hard("    checks: [vault_sealed]\n    attacks: []\n    known: {attacks: [runaway_loop@L3], why: w}\n"),
			"vault_open: known runaway_loop@L3: attack runaway_loop is of the course suite"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParsePredictions([]byte(valid2(c.edit)), universe2)
			assert.Check(t, is.ErrorContains(err, c.want))
		})
	}

	_, err = ParsePredictions([]byte(strings.Replace(valid2(nil), "    runaway_loop: 1\n", "    runaway_loop: 6\n", 1)), universe2)
	assert.Check(t, is.ErrorContains(err, "baseline: runaway_loop: level 6, which the course suite's matrix does not have"))

	missing := strings.Replace(valid2(nil), "  - id: vault_open\n", "  - id: vault_shut\n", 1)
	_, err = ParsePredictions([]byte(missing), universe2)
	assert.Check(t, is.ErrorContains(err, `unknown defect "vault_shut"`))
	assert.Check(t, is.ErrorContains(err, "defect vault_open has no prediction"))
}
