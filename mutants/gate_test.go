//go:build !nomutants

package mutants

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestEnableSwitchesOneDefect(t *testing.T) {
	defer Enable("")
	assert.NilError(t, Enable("no_pid_ns"))
	assert.Check(t, On(NoPIDNS))
	assert.Check(t, !On(NoNetNS))
	assert.Check(t, is.Equal(Active(), NoPIDNS))
	assert.Check(t, is.ErrorIs(Enable("bogus"), ErrUnknown))
	assert.NilError(t, Enable(""))
	assert.Check(t, !On(NoPIDNS))
}
