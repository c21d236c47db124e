package harness

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"sandboxlab/sandbox/cgroup"
	"sandboxlab/sandbox/procfs"
)

// owner is this runner in the names of its jails and temporary
// directories.
var owner = procfs.Owner()

// jail is a control group (cgroup v1 pids hierarchy) holding one worker
// and everything it forks, so that the runner can kill all of it whatever
// sessions, process groups or parents it ended up with. Without root or
// without the hierarchy it does nothing, and tags are the only sweep.
type jail struct {
	dir string
}

const pidsHierarchy = "/sys/fs/cgroup/pids"

// jailPrefix starts every jail's name.
const jailPrefix = "sandboxlab-probe-"

// newJail makes the group sandboxlab-probe-<owner>-<worker>: the runner's
// pid and start time (procfs.Owner) and the worker's pid, so that runs side
// by side keep apart. The first jail a runner makes sweeps the empty jails
// of runners that were killed before they could remove them.
func newJail(worker int) *jail {
	cgroup.SweepStale(pidsHierarchy, jailPrefix)
	dir := filepath.Join(pidsHierarchy, jailPrefix+owner+"-"+strconv.Itoa(worker))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return &jail{}
	}
	return &jail{dir: dir}
}

// add moves pid into the jail. The runner calls it right after starting
// the worker, before the worker has started anything of its own.
func (j *jail) add(pid int) {
	if j.dir != "" {
		os.WriteFile(filepath.Join(j.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
	}
}

// close kills whatever is still in the jail and removes it.
func (j *jail) close() {
	if j.dir == "" {
		return
	}
	procfs.KillPIDs(func() []int {
		b, _ := os.ReadFile(filepath.Join(j.dir, "cgroup.procs"))
		var pids []int
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return pids
	}, 10*time.Second)
	// A killed process leaves the group only once reaped; give init a moment.
	for range 50 {
		if os.Remove(j.dir) == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tmpPrefix starts the name of every worker's temporary directory, which
// goes on with the runner's owner part.
const tmpPrefix = "sandboxlab-mutant-"

var sweptTemp sync.Once

// sweepStaleTemp removes, once per runner process, the workers' temporary
// directories of runners that were killed before they could remove them
// (their workers die with them, by their parent-death signal).
func sweepStaleTemp() { sweptTemp.Do(func() { sweepTemp(os.TempDir()) }) }

// sweepTemp is sweepStaleTemp's work in parent, done every time.
func sweepTemp(parent string) {
	for _, dir := range procfs.Orphaned(parent, tmpPrefix) {
		os.RemoveAll(dir)
	}
}
