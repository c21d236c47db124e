package seccomp

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/skip"
)

// build returns the filter, skipping the test where there is none.
func build(t *testing.T) []unix.SockFilter {
	t.Helper()
	skip.If(t, runtime.GOARCH != "amd64", "the filter has a table for amd64 only")
	prog, err := Build()
	assert.NilError(t, err)
	return prog
}

func TestBuildFailsClosedElsewhere(t *testing.T) {
	skip.If(t, runtime.GOARCH == "amd64")
	_, err := Build()
	assert.Check(t, is.ErrorIs(err, ErrUnsupported))
}

func TestInstallRefusesBadPrograms(t *testing.T) {
	// Neither reaches a system call.
	assert.Check(t, is.ErrorContains(Install(nil), "empty"))
	assert.Check(t, is.ErrorContains(Install(make([]unix.SockFilter, unix.BPF_MAXINSNS+1)), "BPF_MAXINSNS"))
}
