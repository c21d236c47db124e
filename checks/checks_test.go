package checks

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/skip"

	"sandboxlab/report"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/verdict"
)

// TestChecks runs every promise check on the correct sandbox. Checks run
// one after another: some measure the harness's own memory and time.
func TestChecks(t *testing.T) {
	skip.If(t, testing.Short(), "the mutation run's baseline runs every check (TestMutate in harness)")
	for _, c := range All {
		t.Run(c.ID, func(t *testing.T) {
			var out report.Check
			c.Run(context.Background(), t, &out)
			t.Logf("%s: %s (%d ms)", c.ID, out.Evidence, out.MS)
		})
	}
}

// TestRegistry: every check names its suite, the course's 26 first, in
// docs/course.md's order; ids are unique.
func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	count := map[verdict.Suite]int{}
	for i, c := range All {
		assert.Check(t, !seen[c.ID], "duplicate %s", c.ID)
		seen[c.ID] = true
		count[c.Suite]++
		assert.Check(t, slices.Contains(verdict.Suites, c.Suite), "%s has suite %q", c.ID, c.Suite)
		if i > 0 {
			assert.Check(t, slices.Index(verdict.Suites, All[i-1].Suite) <= slices.Index(verdict.Suites, c.Suite),
				"%s (%s) comes after %s (%s)", c.ID, c.Suite, All[i-1].ID, All[i-1].Suite)
		}
	}
	assert.Check(t, is.Equal(count[verdict.Course], 26))
	assert.Check(t, is.Equal(All[0].ID, "wall_timeout"))
	assert.Check(t, is.Equal(All[25].ID, "tool_errors"))
}

// TestUntimedMatchesItsClock: a check is marked Untimed exactly when its
// file gives a run the clock of what it does not test (notTimed,
// egressPolicy), and no course check is: their clocks are the course's.
func TestUntimedMatchesItsClock(t *testing.T) {
	for _, c := range All {
		src, err := os.ReadFile(c.ID + ".go")
		assert.NilError(t, err)
		long := strings.Contains(string(src), "notTimed") || strings.Contains(string(src), "egressPolicy(")
		assert.Check(t, is.Equal(c.Untimed, long), "%s: Untimed is %v, its file uses notTimed or egressPolicy: %v", c.ID, c.Untimed, long)
		assert.Check(t, !c.Untimed || c.Suite != verdict.Course, "%s is a course check", c.ID)
	}
}

func TestSelect(t *testing.T) {
	ids := func(list []*Check) []string {
		out := []string{}
		for _, c := range list {
			out = append(out, c.ID)
		}
		return out
	}
	all, err := Select(nil, nil)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(ids(all), IDs()))

	course, err := Select(nil, []verdict.Suite{verdict.Course})
	assert.NilError(t, err)
	assert.Check(t, is.Len(course, 26))

	hardening, err := Select(nil, []verdict.Suite{verdict.Hardening})
	assert.NilError(t, err)
	assert.Check(t, is.Len(hardening, len(All)-26))
	for _, c := range hardening {
		assert.Check(t, is.Equal(c.Suite, verdict.Hardening), c.ID)
	}

	some, err := Select([]string{"names_absolute", "exit_status"}, []verdict.Suite{verdict.Course})
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(ids(some), []string{"exit_status", "names_absolute"}), "registry order")

	_, err = Select([]string{"exit_status"}, []verdict.Suite{verdict.Hardening})
	assert.Check(t, is.ErrorContains(err, "check exit_status is in the course suite, which is not selected (suites: hardening)"))
	_, err = Select([]string{"exit_statuss"}, nil)
	assert.Check(t, is.ErrorContains(err, `unknown check "exit_statuss"`))
}

// TestCleanupRunsLastFirstAfterAFailedBody: a body that stops early
// (FailNow ends its goroutine) still has its cleanups run, last
// registered first, and its fixture directory removed, before the
// verdict is filled in.
func TestCleanupRunsLastFirstAfterAFailedBody(t *testing.T) {
	var ran []string
	var root string
	c := &Check{ID: "cleanup_order", Body: func(t *T) {
		root = t.Root()
		t.Cleanup(func() { ran = append(ran, "first") })
		t.Cleanup(func() { ran = append(ran, "second") })
		t.Logf("stopping early")
		t.FailNow()
		t.Cleanup(func() { ran = append(ran, "never registered") })
	}}
	var out report.Check
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(context.Background(), recorder{}, &out)
	}()
	<-done
	assert.Check(t, is.DeepEqual(ran, []string{"second", "first"}))
	assert.Check(t, !out.Passed)
	assert.Check(t, is.Equal(out.Evidence, "stopping early"))
	assert.Check(t, root != "")
	_, err := os.Stat(root)
	assert.Check(t, os.IsNotExist(err), "the fixture directory %s is left: %v", root, err)
}

// TestFixtureRootGoesWithMountsBelow: a session a defect kept may leave
// its own filesystem mounted in the check's fixture directory (L6's disk
// cap under workdir_kept); the directory is still removed, mount and all.
func TestFixtureRootGoesWithMountsBelow(t *testing.T) {
	skip.If(t, os.Geteuid() != 0, "mounting a tmpfs needs root")
	var root, mnt string
	c := &Check{ID: "kept_mount", Body: func(t *T) {
		root = t.Root()
		mnt = filepath.Join(root, "sessions", "a session\twith odd name")
		t.NilError(os.MkdirAll(mnt, 0o700))
		t.NilError(unix.Mount("sandboxlab-test", mnt, "tmpfs", 0, "size=1m"))
		t.NilError(os.WriteFile(filepath.Join(mnt, "left"), []byte("x"), 0o600))
	}}
	var out report.Check
	c.Run(context.Background(), recorder{}, &out)
	assert.Assert(t, out.Passed, out.Evidence)
	assert.Check(t, is.Len(evidence.MountsBelow(root), 0))
	_, err := os.Stat(root)
	assert.Check(t, os.IsNotExist(err), "the fixture directory %s is left: %v", root, err)
	b, err := os.ReadFile("/proc/self/mountinfo")
	assert.NilError(t, err)
	assert.Check(t, !strings.Contains(string(b), "sandboxlab-test"), "the tmpfs is still mounted")
}
