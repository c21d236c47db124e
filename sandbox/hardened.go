package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"slices"

	"golang.org/x/sys/unix"

	"sandboxlab/mutants"
	"sandboxlab/sandbox/cgroup"
	"sandboxlab/sandbox/landlock"
)

// What Landlock lets an L6 program reach: it reads and executes beneath
// the system's directories, and reads and writes a few devices besides
// its session and private directories.
var (
	landlockSystem  = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/proc", "/sys", "/dev"}
	landlockDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}
)

// landlockRules are the init's Landlock rules for running c in the
// session directory dir under p.
func landlockRules(p Policy, c Command, dir string) landlock.Rules {
	rw := append([]string{dir}, p.Filesystem.Private...)
	rw = append(rw, landlockDevices...)
	if mutants.On(mutants.LandlockWideWrite) {
		// The defect: write granted beneath /, as a sandbox does when a
		// tool it runs complains about a path it cannot write.
		rw = append(rw, "/")
	}
	return landlock.Rules{ReadExec: append(slices.Clone(landlockSystem), c.Path), ReadWrite: rw}
}

// cgroupGateFD is the descriptor on which a cgroup v1 init waits until
// the parent has put it into the run's group.
const cgroupGateFD = 4

// runGroup is a run's control group on the harness's side: made before
// the program starts, so that the program is in it before its first
// instruction, and removed after it.
type runGroup struct {
	g          *cgroup.Group
	gateR      *os.File // v1: the init's end of the gate (cgroupGateFD)
	gateW      *os.File // v1: closed once the init is in the group
	joinFailed error
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
		return nil, fmt.Errorf("%w: %v (or use --level 5, which needs no control group)", ErrUnavailable, err)
	}
	return &runGroup{g: g}, nil
}

// attach arranges for cmd (the init, whose config is cfg) to start in the
// group: on cgroup v2 the kernel clones it straight into the group; on v1
// the init waits on a pipe until release has added it.
func (rg *runGroup) attach(cmd *exec.Cmd, cfg *initConfig) error {
	if rg.g.Version() == 2 {
		fd, err := rg.g.FD()
		if err != nil {
			return err
		}
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
		return nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("creating the cgroup gate: %w", err)
	}
	rg.gateR, rg.gateW = r, w
	cfg.CgroupGate = true
	// After the init's error pipe (fd 3): cgroupGateFD.
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	return nil
}

// started closes the child's end of the gate once the child holds it.
func (rg *runGroup) started() {
	if rg.gateR != nil {
		rg.gateR.Close()
	}
}

// release puts the started init, pid, into the group and lets it go on
// (v1). If that fails the init is let go with nothing written, and it
// refuses to run the program.
func (rg *runGroup) release(pid int) {
	if rg.gateW == nil {
		return
	}
	if err := rg.g.Add(pid); err != nil {
		rg.joinFailed = err
	} else {
		rg.gateW.Write([]byte{1})
	}
	rg.gateW.Close()
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
	for _, f := range []*os.File{rg.gateR, rg.gateW} {
		if f != nil {
			f.Close()
		}
	}
	rg.g.Close()
}

// awaitCgroup runs in the init: it waits until the parent has put it into
// the run's group. It reads with a bare read(2), since by then the init
// is under its Landlock rules and system-call filter.
func awaitCgroup() error {
	defer unix.Close(cgroupGateFD)
	var b [1]byte
	for {
		n, err := unix.Read(cgroupGateFD, b[:])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return fmt.Errorf("waiting to join the run's control group: %w", err)
		case n != 1:
			return fmt.Errorf("the run's control group was not joined")
		}
		return nil
	}
}
