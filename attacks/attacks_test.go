package attacks

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/report"
	"sandboxlab/sandbox"
	"sandboxlab/sandbox/procfs"
	vocab "sandboxlab/verdict"
)

// designTable is docs/course.md's table of the 16 attacks: the first level that
// stops each, in the table's order.
var designTable = []struct {
	id        string
	firstStop int
}{
	{"runaway_loop", 1}, {"memory_hog", 1}, {"output_flood", 1}, {"disk_filler", 1}, {"fd_hoarder", 1}, {"lingering_child", 1},
	{"env_secrets", 2}, {"app_dir_overwrite", 2},
	{"fork_bomb", 3}, {"detached_daemon", 3}, {"host_process_snoop", 3},
	{"exfiltrate", 4},
	{"read_ssh_key", 5}, {"plant_in_home", 5}, {"privileged_mount", 5},
	{"file_api_symlink", 0},
}

func TestRegistryFollowsDesign(t *testing.T) {
	var ids []string
	for _, row := range designTable {
		ids = append(ids, row.id)
		assert.Check(t, is.Equal(Baseline()[row.id], row.firstStop), row.id)
	}
	assert.DeepEqual(t, rowIDs(courseRows), ids)
	assert.DeepEqual(t, IDs()[:len(ids)], ids)
	assert.Check(t, is.Len(registry, len(IDs())), "every registered attack has a row")

	// Every attack has its row order's suite, the course's first.
	for i, a := range All() {
		want := vocab.Course
		if i >= len(courseRows) {
			want = vocab.Hardening
		}
		assert.Check(t, is.Equal(a.Suite, want), a.ID)
	}
	ids = IDs() // the programs of every suite

	// One program per attack, and no program without an attack.
	files, err := fs.Glob(programs, "programs/*")
	assert.NilError(t, err)
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".py"))
	}
	slices.Sort(names)
	sorted := slices.Sorted(slices.Values(ids))
	assert.DeepEqual(t, names, sorted)

	for _, a := range All() {
		assert.Check(t, a.Escapes != "", a.ID)
		assert.Check(t, registry[a.ID].new() != nil, a.ID)
	}
}

// rowIDs returns the ids of a row order's attacks, in its order.
func rowIDs(rows []*spec) []string {
	ids := make([]string, 0, len(rows))
	for _, s := range rows {
		ids = append(ids, s.id)
	}
	return ids
}

func TestParseLevels(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"", nil},
		{"0-5", []int{0, 1, 2, 3, 4, 5}},
		{"0-6", []int{0, 1, 2, 3, 4, 5, 6}},
		{"3", []int{3}},
		{"4-5,0,2", []int{0, 2, 4, 5}},
		{"1-2,2-3", []int{1, 2, 3}},
		{" 2 - 3 ", []int{2, 3}},
	} {
		got, err := ParseLevels(tc.in)
		assert.NilError(t, err, tc.in)
		assert.DeepEqual(t, got, tc.want)
	}
	for _, bad := range []string{"7", "-1", "0-7", "5-3", "x", "1,", "1-", "1-2-3"} {
		_, err := ParseLevels(bad)
		assert.Check(t, errors.Is(err, ErrUsage), "%q: %v", bad, err)
	}
}

// TestSuiteSelection: --suite picks the attacks, --only must name
// attacks of the suites picked, and each attack runs at its suite's
// levels only.
func TestSuiteSelection(t *testing.T) {
	course := []vocab.Suite{vocab.Course}
	n, err := Options{Suites: course}.Cells()
	assert.NilError(t, err)
	assert.Check(t, is.Equal(n, len(courseRows)*vocab.CourseLevels), "the course's matrix is L0–L5 whatever else the sandbox has")
	n, err = Options{Suites: []vocab.Suite{vocab.Hardening}}.Cells()
	assert.NilError(t, err)
	assert.Check(t, is.Equal(n, len(hardeningRows)*sandbox.Levels))
	n, err = Options{}.Cells()
	assert.NilError(t, err)
	assert.Check(t, is.Equal(n, len(courseRows)*vocab.CourseLevels+len(hardeningRows)*sandbox.Levels))
	n, err = Options{Only: []string{"exfiltrate"}, Levels: []int{4, 5}, Suites: course}.Cells()
	assert.NilError(t, err)
	assert.Check(t, is.Equal(n, 2))

	_, err = Options{Only: []string{"exfiltrate"}, Suites: []vocab.Suite{vocab.Hardening}}.Cells()
	assert.Check(t, errors.Is(err, ErrUsage))
	assert.Check(t, is.ErrorContains(err, "attack exfiltrate is in the course suite, which is not selected (suites: hardening)"))

	// A suite's level range, with a made-up attack of the hardening
	// suite: it runs at every level, a course attack only up to L5.
	a, h := &spec{suite: vocab.Course}, &spec{suite: vocab.Hardening}
	levels := []int{0, 3, 5, 6, 7}
	assert.Check(t, is.DeepEqual(a.levels(levels), []int{0, 3, 5}))
	assert.Check(t, is.DeepEqual(h.levels(levels), levels))
}

func TestParseOnly(t *testing.T) {
	got, err := ParseOnly("fork_bomb, exfiltrate")
	assert.NilError(t, err)
	assert.DeepEqual(t, got, []string{"fork_bomb", "exfiltrate"})
	_, err = ParseOnly("fork_bomb,nope")
	assert.Check(t, errors.Is(err, ErrUsage))
	assert.Check(t, is.ErrorContains(err, `unknown attack "nope"`))

	_, err = Run(context.Background(), Options{Only: []string{"nope"}})
	assert.Check(t, errors.Is(err, ErrUsage))
	_, err = Run(context.Background(), Options{Levels: []int{7}})
	assert.Check(t, errors.Is(err, ErrUsage))
}

// escapedCell marks an expected escape in wantMatrix.
const escapedCell = "escaped"

// wantMatrix is the matrix of the correct sandbox: each attack escapes
// below the first level that stops it and is stopped there and above, by
// the mechanism named.
var wantMatrix = map[string][vocab.CourseLevels]string{
	"runaway_loop":       rowFrom(1, "wall clock"),
	"memory_hog":         rowFrom(1, "address-space limit"),
	"output_flood":       rowFrom(1, "output cap"),
	"disk_filler":        rowFrom(1, "file-size limit"),
	"fd_hoarder":         rowFrom(1, "open-files limit"),
	"lingering_child":    {escapedCell, "sweep of the session", "sweep of the session", "PID namespace", "PID namespace", "PID namespace"},
	"env_secrets":        rowFrom(2, "scrubbed environment"),
	"app_dir_overwrite":  rowFrom(2, "private working directory"),
	"fork_bomb":          rowFrom(3, "process-cap monitor"),
	"detached_daemon":    rowFrom(3, "PID namespace"),
	"host_process_snoop": rowFrom(3, "PID namespace: own /proc"),
	"exfiltrate":         rowFrom(4, "network namespace: ENETUNREACH"),
	"read_ssh_key":       rowFrom(5, "hidden by mount namespace"),
	"plant_in_home":      rowFrom(5, "hidden by mount namespace"),
	"privileged_mount":   rowFrom(5, "no capabilities"),
	"file_api_symlink":   rowFrom(0, "file API: link refused"),
}

func rowFrom(first int, mechanism string) [vocab.CourseLevels]string {
	var row [vocab.CourseLevels]string
	for l := range row {
		row[l] = escapedCell
		if l >= first {
			row[l] = mechanism
		}
	}
	return row
}

// testTempDir makes a directory for the cells' fixtures that the
// program's host identity can pass through.
func testTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sandboxlab-attacks-test-")
	assert.NilError(t, err)
	assert.NilError(t, os.Chmod(dir, 0o711))
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestMatrix runs all 96 cells of the course's matrix on the correct
// sandbox and pins every verdict and mechanism, then checks that nothing
// an attack made is left.
func TestMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole matrix (about 20 s): skipped with -short")
	}
	tmp := testTempDir(t)
	sockets := openSockets()
	var progress []string
	rep, err := Run(context.Background(), Options{TempDir: tmp, Suites: []vocab.Suite{vocab.Course},
		Progress: func(c report.Cell) { progress = append(progress, c.Name()) }})
	assert.NilError(t, err)

	assert.DeepEqual(t, rep.Attacks, rowIDs(courseRows))
	assert.DeepEqual(t, rep.Levels, []int{0, 1, 2, 3, 4, 5})
	assert.Check(t, is.Len(rep.Cells, len(courseRows)*vocab.CourseLevels))
	assert.Check(t, is.Len(progress, len(rep.Cells)))
	assert.Check(t, is.Equal(rep.Identity.UID, os.Geteuid()))
	assert.Check(t, is.Equal(rep.Identity.ProgramUID, sandbox.HostIdentity().UID))
	unseen := 0
	for _, c := range rep.Cells {
		got := escapedCell
		if !c.Escaped {
			got = c.StoppedBy
		}
		want := wantMatrix[c.Attack][c.Level]
		assert.Check(t, is.Equal(got, want), "%s: %s", c.Name(), c.Evidence)
		assert.Check(t, c.Evidence != "", c.Name())
		if strings.Contains(c.Evidence, notSeen) {
			unseen++
		}
	}
	// On a busy machine the host may not always look in time; the
	// verdicts above do not depend on it.
	t.Logf("%d of %d stopped cells named their layer from the policy, not from what the host saw", unseen, len(rep.Cells)-len(rep.Escaped()))
	for _, id := range rowIDs(courseRows) {
		assert.Check(t, is.Equal(rep.FirstStopped[id], Baseline()[id]), id)
	}

	assertNothingLeft(t, tmp)
	assert.Check(t, is.Equal(openSockets(), sockets), "a honeypot socket was left open")
}

// assertNothingLeft checks that no process, directory or mount of any
// cell remains.
func assertNothingLeft(t *testing.T, tmp string) {
	t.Helper()
	prefix := procfs.TagPrefix(os.Getpid())
	procs, err := procfs.Scan()
	assert.NilError(t, err)
	for _, p := range procs {
		if !p.Alive() {
			continue
		}
		for _, a := range procfs.Cmdline(p.PID) {
			assert.Check(t, !strings.HasPrefix(a, prefix), "attack process %d is still running", p.PID)
		}
		// The canaries and the sandboxed programs are the harness's
		// children; all of them must have been reaped.
		assert.Check(t, p.PPID != os.Getpid(), "child %d (%v) is still running", p.PID, procfs.Cmdline(p.PID))
	}
	left, err := os.ReadDir(tmp)
	assert.NilError(t, err)
	assert.Check(t, is.Len(left, 0), "cell directories left behind")
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	assert.NilError(t, err)
	assert.Check(t, !strings.Contains(string(mounts), prefix), "an attack's mount reached the host")
}

// openSockets counts the sockets the harness holds open.
func openSockets() int {
	fds, _ := os.ReadDir("/proc/self/fd")
	n := 0
	for _, fd := range fds {
		if l, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

// TestCancelCleansUp interrupts a cell that would run for 1.9 s and
// checks that Run returns at once and leaves nothing behind.
func TestCancelCleansUp(t *testing.T) {
	tmp := testTempDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Run(ctx, Options{Only: []string{"runaway_loop"}, Levels: []int{0}, TempDir: tmp})
	assert.Check(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	assert.Check(t, time.Since(start) < 1500*time.Millisecond, "took %v", time.Since(start))
	assertNothingLeft(t, tmp)
}

// TestSelection runs a corner of the matrix: the order of the report
// follows the matrix, not the command line.
func TestSelection(t *testing.T) {
	rep, err := Run(context.Background(), Options{Only: []string{"read_ssh_key", "env_secrets"}, Levels: []int{5, 1}, TempDir: testTempDir(t)})
	assert.NilError(t, err)
	assert.DeepEqual(t, rep.Attacks, []string{"env_secrets", "read_ssh_key"})
	assert.DeepEqual(t, rep.Levels, []int{1, 5})
	var names []string
	for _, c := range rep.Cells {
		names = append(names, c.Name())
	}
	assert.DeepEqual(t, names, []string{"env_secrets@L1", "env_secrets@L5", "read_ssh_key@L1", "read_ssh_key@L5"})
	assert.DeepEqual(t, rep.Escaped(), []string{"env_secrets@L1", "read_ssh_key@L1"})
	assert.DeepEqual(t, rep.FirstStopped, map[string]int{"env_secrets": 5, "read_ssh_key": 5})
}

// TestObserverSeesIsolation checks what the host reads of a program's
// isolation at the two ends of the scale. The host may fail to look in
// time on a busy machine, so it tries a few times.
func TestObserverSeesIsolation(t *testing.T) {
	tmp := testTempDir(t)
	observe := func(level int) isolation {
		t.Helper()
		for range 5 {
			fx, err := makeFixtures(tmp)
			assert.NilError(t, err)
			e := &env{fx: fx, policy: sandbox.MustPreset(level), token: procfs.Tag()}
			s := registry["env_secrets"]
			_, err = e.run(context.Background(), s, s.new())
			assert.NilError(t, err)
			iso, appDir, sessionDir := e.iso, fx.appDir, e.session.Dir()
			assert.NilError(t, e.cleanup())
			if iso.seen && iso.programSeen {
				// Make paths comparable across attempts.
				switch iso.cwd {
				case appDir:
					iso.cwd = "app"
				case sessionDir:
					iso.cwd = "session"
				}
				return iso
			}
		}
		t.Fatalf("the host never saw the program at L%d in 5 runs", level)
		return isolation{}
	}

	bare := observe(0)
	assert.Check(t, !bare.ownPID && !bare.ownNet && !bare.ownMount && !bare.ownUser, "%+v", bare)
	assert.Check(t, is.Equal(bare.cwd, "app"))
	assert.Check(t, bare.envHasKey)
	assert.Check(t, !bare.homeCovered)

	full := observe(5)
	assert.Check(t, full.ownPID && full.ownNet && full.ownMount && full.ownUser, "%+v", full)
	assert.Check(t, is.Equal(full.cwd, "session"))
	assert.Check(t, !full.envHasKey)
	assert.Check(t, full.homeCovered)
	assert.Check(t, is.Equal(full.capEff, uint64(0)))
	assert.Check(t, is.Equal(full.capBnd, uint64(0)))
	assertNothingLeft(t, tmp)
}

func TestFixturesMustBeReachable(t *testing.T) {
	if !sandbox.HostRoot() {
		t.Skip("the program runs as the harness's own user: every directory it can use, the program can")
	}
	closed := filepath.Join(testTempDir(t), "closed")
	assert.NilError(t, os.Mkdir(closed, 0o700))
	_, err := Run(context.Background(), Options{TempDir: closed, Only: []string{"env_secrets"}, Levels: []int{0}})
	assert.Check(t, is.ErrorContains(err, "cannot pass through "+closed))
}
