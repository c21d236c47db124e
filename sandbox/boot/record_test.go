package boot

import (
	"strings"
	"syscall"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestInitRecordRoundTrip: what the init encodes, the parent decodes;
// a message too long for one atomic write is cut, on a rune boundary.
func TestInitRecordRoundTrip(t *testing.T) {
	for _, r := range []Record{
		{Kind: InitSetupFailed, Step: StepMountProc, Errno: syscall.EPERM, Message: "mounting proc on /proc"},
		{Kind: InitSetupFailed, Step: StepStart, Message: "the init is not on its first thread"},
		{Kind: InitExecFailed, Step: StepExec, Errno: syscall.ENOEXEC},
	} {
		got, err := DecodeRecord(r.Encode())
		assert.NilError(t, err)
		assert.Check(t, is.DeepEqual(got, r))
	}
	long := Record{Kind: InitSetupFailed, Step: StepHide, Message: strings.Repeat("é", RecordMax)}
	b := long.Encode()
	assert.Check(t, is.Len(b, RecordMax))
	got, err := DecodeRecord(b)
	assert.NilError(t, err)
	assert.Check(t, strings.HasPrefix(long.Message, got.Message) && len(got.Message) >= RecordMax-RecordHeader-1)
}
