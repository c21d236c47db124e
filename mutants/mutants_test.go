package mutants

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/verdict"
)

func TestRegistry(t *testing.T) {
	seen := map[ID]bool{}
	count := map[verdict.Suite]int{}
	for i, d := range All {
		assert.Check(t, !seen[d.ID], "duplicate %s", d.ID)
		seen[d.ID] = true
		assert.Check(t, d.Summary != "", d.ID)
		count[d.Suite]++
		// Every defect names its suite, the course's come first.
		assert.Check(t, slices.Contains(verdict.Suites, d.Suite), "%s has suite %q", d.ID, d.Suite)
		if i > 0 {
			assert.Check(t, slices.Index(verdict.Suites, All[i-1].Suite) <= slices.Index(verdict.Suites, d.Suite),
				"%s (%s) comes after %s (%s)", d.ID, d.Suite, All[i-1].ID, All[i-1].Suite)
		}
	}
	assert.Check(t, is.Equal(count[verdict.Course], 29), "the course has 29 defects")
	assert.Check(t, is.Equal(All[0].ID, FailOpen))
	assert.Check(t, is.Equal(All[28].ID, QuotaIgnored))
}

// TestEverySiteIsPlanted reads each defect's site file and finds the
// gate call there: the registry names where the defect lives, in one hop.
func TestEverySiteIsPlanted(t *testing.T) {
	names := constNames(t)
	for _, d := range All {
		b, err := os.ReadFile(filepath.Join("..", d.Site))
		assert.NilError(t, err, d.ID)
		call := "mutants.On(mutants." + names[d.ID] + ")"
		assert.Check(t, strings.Contains(string(b), call), "%s: %s does not call %s", d.ID, d.Site, call)
	}
}

// constNames maps each ID to the name of its constant in mutants.go.
func constNames(t *testing.T) map[ID]string {
	b, err := os.ReadFile("mutants.go")
	assert.NilError(t, err)
	out := map[ID]string{}
	for _, m := range regexp.MustCompile(`(?m)^\t(\w+)\s+ID = "(\w+)"$`).FindAllStringSubmatch(string(b), -1) {
		out[ID(m[2])] = m[1]
	}
	assert.Assert(t, is.Len(out, len(All)))
	return out
}

func TestLookup(t *testing.T) {
	d, err := Lookup("caps_kept")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(d.ID, CapsKept))
	_, err = Lookup("caps_kpet")
	assert.Check(t, is.ErrorIs(err, ErrUnknown))
	assert.Check(t, is.ErrorContains(err, "caps_kept"), "the error lists the known ids")
}
