package harness

import (
	"fmt"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab"
	"sandboxlab/mutants"
	"sandboxlab/report/verdict"
)

var universe = Universe{Checks: []string{"wall_timeout", "timeout_flag", "file_links"}, Attacks: []string{"runaway_loop", "file_api_symlink"}, Levels: 6}

// valid builds a predictions file for every defect; edit replaces the
// entry of one defect.
func valid(edit map[mutants.ID]string) string {
	var b strings.Builder
	b.WriteString("version: 1\nbaseline:\n  attacks:\n    runaway_loop: 1\n    file_api_symlink: 0\ndefects:\n")
	for _, d := range mutants.All {
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
