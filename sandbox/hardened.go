package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"sandboxlab/mutants"
	"sandboxlab/sandbox/cgroup"
	"sandboxlab/sandbox/landlock"
)

// What Landlock lets an L6 program reach: it reads and executes beneath
// the system's directories (with an allowlist root, the exposed paths),
// and reads and writes a few devices besides its session and private
// directories.
var (
	landlockSystem  = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/proc", "/sys", "/dev"}
	landlockDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}
)

// landlockRules are the init's Landlock rules for running c in the
// session directory dir under p.
func landlockRules(p Policy, c Command, dir string) landlock.Rules {
	rw := append([]string{sessionAt(p, dir)}, p.Filesystem.Private...)
	rw = append(rw, landlockDevices...)
	if mutants.On(mutants.LandlockWideWrite) {
		// The defect: write granted beneath /, as a sandbox does when a
		// tool it runs complains about a path it cannot write.
		rw = append(rw, "/")
	}
	system := landlockSystem
	if len(p.Filesystem.Expose) > 0 {
		// The program's root holds nothing else of the system.
		system = append(expandPaths(p.Filesystem.Expose), "/dev", "/proc")
	}
	return landlock.Rules{ReadExec: append(slices.Clone(system), inside(p, dir, c.Path)), ReadWrite: rw}
}

// runGroup is a run's control group on the harness's side: made before
// the program starts, so that the program is in it before its first
// instruction, and removed after it.
type runGroup struct {
	g     *cgroup.Group
	tasks []*os.File // v1: the group's tasks files, for the init
	// home are the tasks files of the groups the group was made in, one
	// per hierarchy, for an init that enters a cgroup namespace (v1).
	home []*os.File
	pids int64 // the group's pids.max (0: none)
}

// newRunGroup makes the group p asks for, or nil when it asks for none.
// A machine that cannot give one refuses the run (ErrUnavailable).
func newRunGroup(p Policy) (*runGroup, error) {
	c := p.Hardened.Cgroup
	if !c.on() {
		return nil, nil
	}
	cfg := cgroup.Config{Memory: c.Memory, Pids: int64(c.Pids), CPUWeight: c.CPUWeight}
	if mutants.On(mutants.PidsMonitorOnly) {
		cfg.Pids = 0 // the defect: the /proc monitor is the only cap
	}
	g, err := cgroup.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w (the levels up to L5 need no control group)", ErrUnavailable, err)
	}
	return &runGroup{g: g, pids: cfg.Pids}, nil
}

// capsProcesses reports whether the kernel holds the run to at most max
// processes: the group's pids.max counts every process and thread of
// the run (the init is not in the group), so with it at or under max, a
// monitor counting processes could never find more. Nil-safe.
func (rg *runGroup) capsProcesses(max int) bool {
	return rg != nil && rg.pids > 0 && rg.pids <= int64(max)
}

// attach arranges for cmd (the init, whose config is cfg) to start in the
// group: on cgroup v2 the kernel clones it straight into the group; on v1
// the init moves its own thread into it, just before it execs the program
// from that thread (see joinCgroup).
//
// On v1 the parent could write the init's pid to cgroup.procs instead,
// but moving a whole process takes the kernel's global
// cgroup_threadgroup_rwsem for writing, which waits for an RCU grace
// period: 0.2 to 20 ms a run on this machine, the most of L6's cost over
// L5. A thread that writes 0 to a tasks file moves itself without it, in
// about 80 microseconds for three hierarchies.
func (rg *runGroup) attach(cmd *exec.Cmd, cfg *initConfig) error {
	if rg.g.Version() == 2 {
		fd, err := rg.g.FD()
		if err != nil {
			return err
		}
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
		return nil
	}
	for _, dir := range rg.g.Dirs() {
		f, err := os.OpenFile(filepath.Join(dir, "tasks"), os.O_WRONLY, 0)
		if err != nil {
			rg.closeTasks()
			return fmt.Errorf("%w: opening the run's control group: %w", ErrUnavailable, err)
		}
		rg.tasks = append(rg.tasks, f)
	}
	cfg.CgroupTasks = len(rg.tasks)
	// After the init's error pipe (fd 3): cgroupTasksFD and on.
	cmd.ExtraFiles = append(cmd.ExtraFiles, rg.tasks...)
	if cfg.OwnIdentity {
		// The parent's tasks files, right after the group's: the init
		// leaves the group through them once its namespace is rooted there
		// (see enterCgroupNamespace). It is made below the caller's own
		// group, where the init starts.
		for _, dir := range rg.g.Dirs() {
			f, err := os.OpenFile(filepath.Join(filepath.Dir(dir), "tasks"), os.O_WRONLY, 0)
			if err != nil {
				rg.closeTasks()
				return fmt.Errorf("%w: opening the caller's control group: %w", ErrUnavailable, err)
			}
			rg.home = append(rg.home, f)
		}
		cfg.CgroupHome = len(rg.home)
		cmd.ExtraFiles = append(cmd.ExtraFiles, rg.home...)
	}
	return nil
}

// started closes the parent's copies of the tasks files once the child
// holds its own.
func (rg *runGroup) started() { rg.closeTasks() }

func (rg *runGroup) closeTasks() {
	for _, f := range append(rg.tasks, rg.home...) {
		f.Close()
	}
	rg.tasks, rg.home = nil, nil
}

// finish reads what the kernel counted for the run and removes the
// group, killing whatever of the run is still in it.
func (rg *runGroup) finish() (cgroup.Stats, error) {
	st, err := rg.g.Stats()
	if cerr := rg.g.Close(); err == nil {
		err = cerr
	}
	return st, err
}

// discard removes a group that never held a run.
func (rg *runGroup) discard() {
	rg.closeTasks()
	rg.g.Close()
}
