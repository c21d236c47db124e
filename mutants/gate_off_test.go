//go:build nomutants

package mutants

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestNoDefectLeft: the production build refuses every defect and no site
// can switch on.
func TestNoDefectLeft(t *testing.T) {
	assert.Check(t, !Compiled)
	for _, d := range All {
		assert.Check(t, is.ErrorIs(Enable(string(d.ID)), ErrNotCompiled), d.ID)
		assert.Check(t, !On(d.ID), d.ID)
	}
	assert.NilError(t, Enable(""))
	assert.Check(t, is.Equal(Active(), ID("")))
}
