package guest

import (
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestJobValidate(t *testing.T) {
	ok := Job{Argv: []string{"/usr/bin/python3"}, Dir: "/w", UID: 65534, GID: 65534, Mounts: []Mount{{Tag: "usr", Path: "/usr", ReadOnly: true}}}
	assert.NilError(t, ok.validate())
	for _, tc := range []struct {
		name string
		edit func(j *Job)
		want string
	}{
		{"root", func(j *Job) { j.UID = 0 }, "never runs as root"},
		{"relative program", func(j *Job) { j.Argv = []string{"python3"} }, "absolute program path"},
		{"no program", func(j *Job) { j.Argv = nil }, "absolute program path"},
		{"relative dir", func(j *Job) { j.Dir = "w" }, "not absolute"},
		{"a share over the root", func(j *Job) { j.Mounts = []Mount{{Tag: "r", Path: "/"}} }, "below /"},
		{"a share without a tag", func(j *Job) { j.Mounts = []Mount{{Path: "/x"}} }, "want a tag"},
	} {
		j := ok
		tc.edit(&j)
		assert.Check(t, is.ErrorContains(j.validate(), tc.want), tc.name)
	}
}

// TestJobFiles: the harness's job goes in, the guest's status comes out.
func TestJobFiles(t *testing.T) {
	dir := t.TempDir()
	j := &Job{Argv: []string{"/bin/true"}, Dir: "/w", UID: 1, GID: 1}
	assert.NilError(t, WriteJob(dir, j))
	_, err := os.Stat(filepath.Join(dir, JobFile))
	assert.NilError(t, err)
	assert.Check(t, WriteJob(dir, &Job{Argv: []string{"/bin/true"}, Dir: "/w"}) != nil, "a job for root is refused")
	_, err = ReadStatus(dir)
	assert.Check(t, err != nil, "no status before the guest has written one")
	st := &Status{ExitCode: 3, Start: 1.5, End: 2.25}
	assert.NilError(t, writeStatusTo(dir, st))
	got, err := ReadStatus(dir)
	assert.NilError(t, err)
	assert.DeepEqual(t, got, st)
}

// TestMainOnlyInAGuest: run anywhere but as PID 1, the init refuses and
// powers nothing off.
func TestMainOnlyInAGuest(t *testing.T) {
	assert.Check(t, is.Equal(Main(nil), 2))
}
