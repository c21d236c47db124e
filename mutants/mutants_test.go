package mutants

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestRegistry(t *testing.T) {
	assert.Check(t, is.Len(All, 29))
	seen := map[ID]bool{}
	for _, d := range All {
		assert.Check(t, !seen[d.ID], "duplicate %s", d.ID)
		seen[d.ID] = true
		assert.Check(t, d.Summary != "", d.ID)
	}
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
