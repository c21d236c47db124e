package backends

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"

	"sandboxlab/sandbox/cleanup"
)

// Identity is a host user and group.
type Identity struct{ UID, GID int }

// credential is how a process is started as id.
func (id Identity) credential() *syscall.Credential {
	return &syscall.Credential{Uid: uint32(id.UID), Gid: uint32(id.GID), Groups: []uint32{}}
}

// ColumnOptions is what the harness gives every column.
type ColumnOptions struct {
	// Program is the identity sandboxlab runs programs as (65534 when the
	// harness is host root, the harness's own otherwise).
	Program Identity
	// Root: the harness runs as host root.
	Root bool
	// TempDir is where the column keeps what its runs share (a guest's
	// kernel and initrd), in a directory of its own removed by Close.
	TempDir string
}

// Column is a profile made ready for a column of runs: its executable
// found, the identities it starts as and runs the program as, and what
// its driver made for every run to share.
type Column struct {
	Profile *Profile
	// Path is the backend's executable.
	Path string
	// Starter is the host identity the backend starts as; Cred is how
	// (nil: the harness's own).
	Starter Identity
	Cred    *syscall.Credential
	// Program is the host identity the program has under the backend:
	// the fixtures a user's files stand for belong to it.
	Program Identity
	// Detached: the program is not among the backend's descendants (podman's
	// conmon forks away); the host finds it by its token.
	Detached bool
	// Guest: the program runs in a virtual machine, out of the host's
	// sight but for the emulator's process.
	Guest bool
	// Notes say what the harness chose or found for the column: the
	// accelerator and the guest's own limits, a throw-away user.
	Notes []string
	// GuestLimits states a virtual machine's own limits (memory, CPUs,
	// processes, disk), which its program meets instead of the host's.
	GuestLimits string

	// vars holds the placeholders the whole column shares.
	vars Vars
	// vm is the qemu driver's state (nil for other drivers).
	vm   *vmColumn
	undo cleanup.Stack
}

// OpenColumn readies profile p: finds its executable and makes what its
// driver shares across runs (a throw-away user, a guest's kernel and
// initrd). When the column cannot run here, skip says why and the column
// is nil. Close removes what it made.
func OpenColumn(p *Profile, o ColumnOptions) (c *Column, skip string, err error) {
	path, err := exec.LookPath(p.Command[0])
	if err != nil {
		return nil, fmt.Sprintf("%s is not installed (%v)", p.Command[0], err), nil
	}
	if path, err = filepath.Abs(path); err != nil {
		return nil, fmt.Sprintf("%s: %v", p.Command[0], err), nil
	}
	self := Identity{UID: os.Geteuid(), GID: os.Getegid()}
	c = &Column{Profile: p, Path: path, Starter: self, Program: o.Program}
	switch p.Starter() {
	case UserHarness:
		c.Program = self
	case UserProgram:
		if o.Root {
			c.Starter, c.Cred = o.Program, o.Program.credential()
		}
	}
	defer func() {
		if c == nil || err != nil {
			if cerr := c.closeAll(); err == nil && cerr != nil {
				err = cerr
			}
			c = nil
		}
	}()
	switch p.Driver {
	case DriverPodman:
		skip, err = c.openPodman(o)
	case DriverRunc:
		skip, err = c.openRunc(o)
	case DriverQEMU:
		skip, err = c.openQEMU(o)
	default:
		if p.Starter() == UserThrowaway {
			skip, err = c.openThrowaway(o)
		}
	}
	if skip != "" || err != nil {
		return nil, skip, err
	}
	return c, "", nil
}

// closeAll is Close on a column that may be nil.
func (c *Column) closeAll() error {
	if c == nil {
		return nil
	}
	return c.Close()
}

// Close removes what the column made (a throw-away user, the guest's
// kernel and initrd).
func (c *Column) Close() error { return c.undo.Clean() }

// Fallback switches the column to its slower way of running after its
// probe failed the faster one (a virtual machine from KVM to TCG), and
// says why; ok is false when there is none.
func (c *Column) Fallback(why string) (ok bool) {
	if c.vm == nil {
		return false
	}
	return c.vm.fallback(c, why)
}

// RunSpec is one run of the program under a column.
type RunSpec struct {
	// Program is the program's command: an absolute interpreter path and
	// its arguments.
	Program []string
	// Workdir and Home are what the placeholders of the same name stand
	// for; Dir is the backend's own working directory, Env its
	// environment.
	Workdir, Home, Dir string
	Env                []string
	// Scratch is a fresh, empty directory of the run's, owned by the
	// harness: the driver makes what the run needs in it (a root, a
	// state directory, a bundle, a job directory). The caller removes it
	// after Instance.Close.
	Scratch string
	// Token and OutputMax are as in Launch.
	Token     string
	OutputMax int
}

// Instance is one run made ready: the Launch to start, and what the
// driver made for it, which Close undoes.
type Instance struct {
	Launch Launch
	undo   cleanup.Stack
}

// Close undoes what the driver made for the run: removes the container
// and its state, unmounts what the runtime left mounted. The run must
// have ended (Run.Wait returned).
func (in *Instance) Close() error { return in.undo.Clean() }

// Prepare makes what one run needs and returns it ready to start. On an
// error, what it made is undone already.
func (c *Column) Prepare(r RunSpec) (in *Instance, err error) {
	if len(r.Program) == 0 || !filepath.IsAbs(r.Program[0]) {
		return nil, fmt.Errorf("preparing a run: want an absolute program path, got %q", r.Program)
	}
	in = &Instance{Launch: Launch{Env: r.Env, Dir: r.Dir, Credential: c.Cred, Watchdog: c.Profile.Limit(),
		Token: r.Token, Program: r.Program[0], OutputMax: r.OutputMax}}
	defer func() {
		if err != nil {
			in.undo.Clean()
			in = nil
		}
	}()
	v := c.vars
	v.Workdir, v.Python, v.Home = r.Workdir, r.Program[0], r.Home
	switch c.Profile.Driver {
	case DriverPodman:
		err = c.preparePodman(in, &v, r)
	case DriverRunc:
		err = c.prepareRunc(in, &v, r)
	case DriverQEMU:
		err = c.prepareQEMU(in, &v, r)
	default:
		in.Launch.Argv = c.argv(v, r.Program)
	}
	if err != nil {
		return nil, fmt.Errorf("preparing a run under %s: %w", c.Profile.Name, err)
	}
	return in, nil
}

// argv is the expanded command with the executable's absolute path
// first, followed by program (none for a driver that runs the program
// another way).
func (c *Column) argv(v Vars, program []string) []string {
	cmd := c.Profile.Expand(v)
	return slices.Concat([]string{c.Path}, cmd[1:], program)
}

// mkdirOwned makes dir with mode and hands it to id.
func mkdirOwned(dir string, mode os.FileMode, id Identity) error {
	if err := os.MkdirAll(dir, mode); err != nil {
		return err
	}
	if err := os.Chmod(dir, mode); err != nil { // the umask may have cut it
		return err
	}
	if err := os.Lchown(dir, id.UID, id.GID); err != nil {
		return fmt.Errorf("handing %s to uid %d: %w", dir, id.UID, err)
	}
	return nil
}

// itoa is strconv.Itoa, for the many numbers a driver writes.
func itoa(n int) string { return strconv.Itoa(n) }

// errNotRoot is a driver's reason to skip a column that needs host root.
var errNotRoot = errors.New("needs the harness to run as root")
