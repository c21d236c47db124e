// Package cgroup gives each sandboxed run a control group of its own, made
// below the caller's group and removed after the run, so that the kernel
// enforces the run's process cap, memory limit and CPU share, counts its OOM
// kills, and lets everything the run forked be found and killed. It writes
// cgroupfs files directly and works with cgroup v1 hierarchies (as root)
// and with a delegated cgroup v2 subtree.
//
// A program must be in its group before its first instruction runs. On
// cgroup v2 start it with SysProcAttr.UseCgroupFD and CgroupFD set to FD()
// (clone3 with CLONE_INTO_CGROUP). On cgroup v1 start a child that waits
// (on a pipe, say) before it execs the program, Add its PID, then let it go.
package cgroup

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/sandbox/procfs"
)

// ErrUnavailable is wrapped by New's error when there is neither a usable
// pair of cgroup v1 memory and pids hierarchies nor a delegated cgroup v2
// subtree with those controllers, so that a caller can tell "this machine
// cannot enforce the limits" from a failure and refuse to run unconfined.
var ErrUnavailable = errors.New("no usable control groups")

// remedy is what the error of an unavailable group tells the user to do.
const remedy = "run as root (cgroup v1 memory and pids hierarchies) or in a delegated cgroup v2 subtree with the memory and pids controllers"

// DefaultCPUWeight is the CPU weight a run gets unless told otherwise: the
// kernel's default, so that runs share the CPU equally.
const DefaultCPUWeight = 100

// Config is what one run's group enforces. The zero value makes a group
// without limits, which still holds the run and counts for it.
type Config struct {
	// Memory caps the run's real memory in bytes; swap is denied, so the
	// cap cannot be dodged by swapping. When it is reached the kernel's OOM
	// killer kills a process of the run. 0: no cap.
	Memory int64
	// Pids caps the tasks (processes and threads) the run may have at once;
	// the fork or clone beyond it fails with EAGAIN. 0: no cap.
	Pids int64
	// CPUWeight is the run's share of the CPU against its sibling groups,
	// on the cgroup v2 scale [1, 10000]; 0 means DefaultCPUWeight. On
	// cgroup v1 it is written as cpu.shares, scaled so that 100 is 1024.
	CPUWeight int
	// Mounts says where the caller's groups are; nil means Detect().
	Mounts *Mounts
}

// Stats is what the kernel counted for a run. Read it after the run's
// processes have exited and before Close.
type Stats struct {
	// OOMKills is how many of the run's processes the OOM killer killed,
	// as the kernel counts them (never guessed from a program's output).
	OOMKills int64
	// MemoryPeak is the most memory the run used at once, in bytes, or 0
	// if the kernel does not report it.
	MemoryPeak int64
	// PidsCurrent is how many tasks are in the group now.
	PidsCurrent int64
	// PidsPeak is the most tasks the group held at once, or 0 if the
	// kernel does not report it.
	PidsPeak int64
	// PidsLimitHits is how many forks the process cap refused, or 0 if
	// the kernel does not report it.
	PidsLimitHits int64
}

// Group is one run's control group: a directory in each v1 hierarchy, or
// one directory in the unified hierarchy. Its methods are safe for
// concurrent use.
type Group struct {
	version int
	name    string
	// memory, pids and cpu are the directories holding each controller's
	// files; cpu is "" without a cpu controller. On v2 they are one leaf.
	memory, pids, cpu string

	mu   sync.Mutex
	dirs []string // directories made and not yet removed, in making order
	fd   int      // v2: an open descriptor of the leaf; -1 otherwise
}

// Test seams: what a v2 parent must offer (tests substitute a controller
// this machine has), a hook after each directory is made (a fake tree fills
// in the kernel's files), and how a directory is removed.
var (
	v2Required = []string{"memory", "pids"}
	afterMkdir = func(dir string) {}
	removeDir  = unix.Rmdir
)

// v2Setup serialises changes to a v2 parent (controllers, moving the
// caller), which several runs starting at once would otherwise race on.
var v2Setup sync.Mutex

// New makes a group for one run, below the caller's own group, and sets
// its limits. Without a usable hierarchy the error wraps ErrUnavailable.
func New(c Config) (*Group, error) {
	name, err := newName()
	if err != nil {
		return nil, fmt.Errorf("making cgroup: %w", err)
	}
	if c.CPUWeight == 0 {
		c.CPUWeight = DefaultCPUWeight
	}
	if c.Memory < 0 || c.Pids < 0 || c.CPUWeight < 1 || c.CPUWeight > 10000 {
		return nil, fmt.Errorf("making cgroup %s: memory %d, pids %d, CPU weight %d: out of range", name, c.Memory, c.Pids, c.CPUWeight)
	}
	m := c.Mounts
	if m == nil {
		d, err := Detect()
		if err != nil {
			return nil, fmt.Errorf("making cgroup %s: %w", name, err)
		}
		m = &d
	}
	v2why := v2Unusable(m.V2)
	if v2why == "" {
		SweepStale(m.V2, RunPrefix)
		return newV2(m.V2, name, c)
	}
	v1why := v1Unusable(m.V1)
	if v1why == "" {
		for _, ctl := range v1Controllers {
			if dir, ok := m.V1[ctl]; ok {
				SweepStale(dir, RunPrefix)
			}
		}
		return newV1(m.V1, name, c)
	}
	return nil, fmt.Errorf("making cgroup %s: %w (cgroup v1: %s; cgroup v2: %s): %s", name, ErrUnavailable, v1why, v2why, remedy)
}

// newName names a run's group after the caller (procfs.Owner) and a random
// part, so that runs of one caller and of several callers stay apart and
// a later caller can tell a group whose owner is gone.
func newName() (string, error) {
	var b [4]byte
	if err := procfs.Random(b[:]); err != nil {
		return "", err
	}
	return RunPrefix + procfs.Owner() + "-" + hex.EncodeToString(b[:]), nil
}

// v1Unusable says why the v1 hierarchies cannot hold a run, or "".
func v1Unusable(v1 map[string]string) string {
	for _, ctl := range []string{"memory", "pids"} {
		dir, ok := v1[ctl]
		if !ok {
			return "no " + ctl + " hierarchy"
		}
		if !writable(dir) {
			return "cannot make groups in " + dir
		}
	}
	return ""
}

// v2Unusable says why the unified hierarchy cannot hold a run, or "".
func v2Unusable(dir string) string {
	if dir == "" {
		return "not mounted"
	}
	ctls, err := readWords(dir, "cgroup.controllers")
	if err != nil {
		return "no controllers at " + dir
	}
	for _, ctl := range v2Required {
		if !ctls[ctl] {
			return fmt.Sprintf("%s offers no %s controller", dir, ctl)
		}
	}
	if !writable(dir) {
		return "cannot make groups in " + dir
	}
	return ""
}

func newV1(parents map[string]string, name string, c Config) (*Group, error) {
	g := &Group{version: 1, name: name, fd: -1}
	for _, ctl := range v1Controllers {
		parent, ok := parents[ctl]
		if !ok {
			continue
		}
		dir := filepath.Join(parent, name)
		if !slices.Contains(g.dirs, dir) { // co-mounted controllers share one
			if err := os.Mkdir(dir, 0o755); err != nil {
				g.Close()
				return nil, fmt.Errorf("making cgroup %s: %w", dir, err)
			}
			g.dirs = append(g.dirs, dir)
			afterMkdir(dir)
		}
		switch ctl {
		case "pids":
			g.pids = dir
		case "memory":
			g.memory = dir
		case "cpu":
			g.cpu = dir
		}
	}
	if err := g.configureV1(c); err != nil {
		g.Close()
		return nil, fmt.Errorf("making cgroup %s: %w", name, err)
	}
	return g, nil
}

func (g *Group) configureV1(c Config) error {
	if c.Pids > 0 {
		if err := writeFile(g.pids, "pids.max", strconv.FormatInt(c.Pids, 10)); err != nil {
			return err
		}
	}
	if c.Memory > 0 {
		v := strconv.FormatInt(c.Memory, 10)
		// memsw (memory+swap) may never be below the memory limit, so the
		// memory limit goes first.
		if err := writeFile(g.memory, "memory.limit_in_bytes", v); err != nil {
			return err
		}
		switch {
		case exists(g.memory, "memory.memsw.limit_in_bytes"):
			if err := writeFile(g.memory, "memory.memsw.limit_in_bytes", v); err != nil {
				return err
			}
		case exists(g.memory, "memory.swappiness"):
			// Without swap accounting, keep the run's memory out of swap.
			if err := writeFile(g.memory, "memory.swappiness", "0"); err != nil {
				return err
			}
		}
	}
	if g.cpu != "" {
		return g.setCPUWeight(c.CPUWeight)
	}
	if c.CPUWeight != DefaultCPUWeight {
		return fmt.Errorf("CPU weight %d: no cpu hierarchy", c.CPUWeight)
	}
	return nil
}

func newV2(parent, name string, c Config) (*Group, error) {
	v2Setup.Lock()
	cpu, err := enableV2(parent)
	v2Setup.Unlock()
	if err != nil {
		return nil, fmt.Errorf("making cgroup %s: %w", name, err)
	}
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("making cgroup %s: %w", dir, err)
	}
	g := &Group{version: 2, name: name, memory: dir, pids: dir, dirs: []string{dir}, fd: -1}
	afterMkdir(dir)
	if cpu {
		g.cpu = dir
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		g.Close()
		return nil, fmt.Errorf("making cgroup %s: %w", dir, err)
	}
	g.fd = fd
	if err := g.configureV2(c); err != nil {
		g.Close()
		return nil, fmt.Errorf("making cgroup %s: %w", dir, err)
	}
	return g, nil
}

// enableV2 makes parent hand the required controllers (and cpu, if it
// can) to its children, and reports whether cpu is among them.
//
// The kernel's cgroup v2 rules this follows: a controller can be enabled
// in cgroup.subtree_control only if it is listed in the group's
// cgroup.controllers; and a non-root group that has processes of its own
// cannot enable any (the no-internal-process rule: processes live only in
// the leaves of a controlled subtree). The caller's own group holds the
// caller, so it first moves itself into a leaf (see moveSelf).
func enableV2(parent string) (cpu bool, err error) {
	ctls, err := readWords(parent, "cgroup.controllers")
	if err != nil {
		return false, err
	}
	on, err := readWords(parent, "cgroup.subtree_control")
	if err != nil {
		return false, err
	}
	var want string
	for _, ctl := range v2Required {
		if !on[ctl] {
			want += " +" + ctl
		}
	}
	if want != "" {
		err := writeFile(parent, "cgroup.subtree_control", want[1:])
		if errors.Is(err, unix.EBUSY) {
			if merr := moveSelf(parent); merr != nil {
				return false, fmt.Errorf("%w; moving the caller out of the way: %w", err, merr)
			}
			err = writeFile(parent, "cgroup.subtree_control", want[1:])
		}
		if errors.Is(err, unix.EBUSY) {
			return false, fmt.Errorf("%w (%s holds processes other than this one, and cgroup v2 gives no controllers to the children of a group with processes of its own)", err, parent)
		}
		if err != nil {
			return false, err
		}
	}
	if !ctls["cpu"] {
		return false, nil
	}
	if on["cpu"] {
		return true, nil
	}
	// cpu is a nicety: the kernel refuses it while real-time tasks sit
	// outside the root group, and runs then go without a CPU share.
	return writeFile(parent, "cgroup.subtree_control", "+cpu") == nil, nil
}

// moveSelf moves the calling process from parent into a leaf below it,
// named after the caller, so that parent holds no processes and may enable
// controllers; Detect reports parent, not the leaf, afterwards. The leaf
// stays for the caller's lifetime (the caller lives in it).
func moveSelf(parent string) error {
	leaf := filepath.Join(parent, callerLeaf(os.Getpid()))
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("making cgroup %s: %w", leaf, err)
	}
	return writeFile(leaf, "cgroup.procs", strconv.Itoa(os.Getpid()))
}

func (g *Group) configureV2(c Config) error {
	if c.Pids > 0 {
		if err := writeFile(g.pids, "pids.max", strconv.FormatInt(c.Pids, 10)); err != nil {
			return err
		}
	}
	if c.Memory > 0 {
		if err := writeFile(g.memory, "memory.max", strconv.FormatInt(c.Memory, 10)); err != nil {
			return err
		}
		// memory.swap.max is absent without swap accounting; then there
		// is no swap to deny.
		if exists(g.memory, "memory.swap.max") {
			if err := writeFile(g.memory, "memory.swap.max", "0"); err != nil {
				return err
			}
		}
	}
	if g.cpu != "" {
		return g.setCPUWeight(c.CPUWeight)
	}
	if c.CPUWeight != DefaultCPUWeight {
		return fmt.Errorf("CPU weight %d: no cpu controller", c.CPUWeight)
	}
	return nil
}

// Version is the cgroup version the group lives in (1 or 2), for the
// caller to pick how to place its child (Add or FD).
func (g *Group) Version() int { return g.version }

// Name is the group's directory name, the same in every hierarchy.
func (g *Group) Name() string { return g.name }

// Dirs lists the group's directories (one per v1 hierarchy, or the v2
// leaf), for logs and for checking that Close removed them.
func (g *Group) Dirs() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.dirs)
}

// FD returns a descriptor of the group's directory for
// SysProcAttr.CgroupFD with UseCgroupFD, which starts a child inside the
// group (clone3 CLONE_INTO_CGROUP). It is cgroup v2 only; the group owns
// the descriptor and Close closes it.
func (g *Group) FD() (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.version != 2 {
		return -1, fmt.Errorf("cgroup %s: no directory descriptor on cgroup v1: use Add", g.name)
	}
	if g.fd < 0 {
		return -1, fmt.Errorf("cgroup %s: closed", g.name)
	}
	return g.fd, nil
}

// Add moves process pid (all its threads) into the group, in every
// hierarchy. The process must not fork while it is being added, or a child
// may land in some hierarchies only: add a child that is waiting to be told
// to go on.
func (g *Group) Add(pid int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.dirs) == 0 {
		return fmt.Errorf("adding %d to cgroup %s: closed", pid, g.name)
	}
	for _, dir := range g.dirs {
		if err := writeFile(dir, "cgroup.procs", strconv.Itoa(pid)); err != nil {
			return fmt.Errorf("adding %d to cgroup %s: %w", pid, g.name, err)
		}
	}
	return nil
}

// CPUWeight reads the group's CPU weight back from the kernel, on the
// cgroup v2 scale whatever the version.
func (g *Group) CPUWeight() (int, error) {
	if g.cpu == "" {
		return 0, fmt.Errorf("cgroup %s: no cpu controller", g.name)
	}
	if g.version == 2 {
		n, err := readInt(g.cpu, "cpu.weight")
		return int(n), err
	}
	shares, err := readInt(g.cpu, "cpu.shares")
	return int((shares*DefaultCPUWeight + 512) / 1024), err
}

// SetCPUWeight changes the group's CPU weight (cgroup v2 scale, [1, 10000]).
func (g *Group) SetCPUWeight(w int) error {
	if w < 1 || w > 10000 {
		return fmt.Errorf("cgroup %s: CPU weight %d out of [1, 10000]", g.name, w)
	}
	if g.cpu == "" {
		return fmt.Errorf("cgroup %s: no cpu controller", g.name)
	}
	return g.setCPUWeight(w)
}

func (g *Group) setCPUWeight(w int) error {
	if g.version == 2 {
		return writeFile(g.cpu, "cpu.weight", strconv.Itoa(w))
	}
	// cpu.shares accepts [2, 262144]; [1, 10000] maps to [10, 102400].
	return writeFile(g.cpu, "cpu.shares", strconv.Itoa(w*1024/DefaultCPUWeight))
}

// Stats reads what the kernel counted for the group. It fails if the
// kernel keeps no OOM kill count (cgroup v1 before Linux 4.13), since a
// run's OOM verdict must not be guessed.
func (g *Group) Stats() (Stats, error) {
	var s Stats
	var err error
	if g.version == 2 {
		s.OOMKills, err = readKey(g.memory, "memory.events", "oom_kill")
		s.MemoryPeak, _ = readInt(g.memory, "memory.peak")
	} else {
		s.OOMKills, err = readKey(g.memory, "memory.oom_control", "oom_kill")
		s.MemoryPeak, _ = readInt(g.memory, "memory.max_usage_in_bytes")
	}
	if err != nil {
		return Stats{}, fmt.Errorf("cgroup %s: OOM kill count: %w", g.name, err)
	}
	s.PidsCurrent, err = readInt(g.pids, "pids.current")
	if err != nil {
		return Stats{}, fmt.Errorf("cgroup %s: %w", g.name, err)
	}
	s.PidsPeak, _ = readInt(g.pids, "pids.peak")
	s.PidsLimitHits, _ = readKey(g.pids, "pids.events", "max")
	return s, nil
}

// OOMKilled reports whether the kernel's OOM killer killed any process of
// the run.
func (g *Group) OOMKilled() (bool, error) {
	s, err := g.Stats()
	return s.OOMKills > 0, err
}

// procs lists the processes in the group, in any of its hierarchies.
func (g *Group) procs() ([]int, error) {
	var all []int
	for _, dir := range g.dirs {
		pids, err := readPIDs(dir)
		if err != nil {
			return nil, err
		}
		for _, pid := range pids {
			if !slices.Contains(all, pid) {
				all = append(all, pid)
			}
		}
	}
	return all, nil
}

// closeLimit bounds how long Close waits for the group to empty and for
// the kernel to let its directories go.
const closeLimit = 10 * time.Second

// Close kills every process still in the group, waits until it is empty
// and removes its directories. It may be called again, by the run's end and
// by a deferred cleanup alike: a later call finishes what an earlier one
// could not and otherwise does nothing.
func (g *Group) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fd >= 0 {
		unix.Close(g.fd)
		g.fd = -1
	}
	if len(g.dirs) == 0 {
		return nil
	}
	deadline := time.Now().Add(closeLimit)
	if err := g.empty(deadline); err != nil {
		return fmt.Errorf("closing cgroup %s: %w", g.name, err)
	}
	var errs []error
	var left []string
	for i := len(g.dirs) - 1; i >= 0; i-- {
		if err := removeWhenFree(g.dirs[i], deadline); err != nil {
			errs = append(errs, fmt.Errorf("closing cgroup %s: %w", g.dirs[i], err))
			left = append([]string{g.dirs[i]}, left...)
		}
	}
	g.dirs = left
	return errors.Join(errs...)
}

// empty kills what is in the group until nothing is. On v2 cgroup.kill
// kills the whole group at once, forks in flight included; otherwise each
// listed process gets SIGKILL through a pidfd (see killMembers) and is
// waited for, and the listing repeats, since a process may fork while its
// group is being killed (pids.max bounds how often).
func (g *Group) empty(deadline time.Time) error {
	for {
		pids, err := g.procs()
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d processes still in it after %v", len(pids), closeLimit)
		}
		if g.version == 2 && exists(g.dirs[0], "cgroup.kill") {
			if err := writeFile(g.dirs[0], "cgroup.kill", "1"); err != nil {
				return err
			}
			time.Sleep(time.Millisecond)
			continue
		}
		g.killMembers(pids, deadline)
	}
}

// killMembers sends SIGKILL to each of pids that is still in the group
// once a pidfd holds it, and waits until those have exited. It is
// procfs.Killer plus that check, which makes a PID recycled since
// cgroup.procs was read harmless: the pidfd then holds a process outside
// the group (left alone) or one already gone (the signal fails).
func (g *Group) killMembers(pids []int, deadline time.Time) {
	var fds []int
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue
		}
		if g.holds(pid) && unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) == nil {
			fds = append(fds, fd)
		} else {
			unix.Close(fd)
		}
	}
	for _, fd := range fds {
		// The pidfd turns readable when its process has exited (it may
		// stay a zombie until its parent reaps it; it has left the group).
		for {
			left := time.Until(deadline)
			if left <= 0 {
				break
			}
			n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left.Milliseconds())+1)
			if err == unix.EINTR || (err == nil && n == 0) {
				continue
			}
			break
		}
		unix.Close(fd)
	}
}

// holds reports whether process pid is in the group, by its own
// /proc/PID/cgroup (the group's name is unique to this run).
func (g *Group) holds(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasSuffix(line, "/"+g.name) {
			return true
		}
	}
	return false
}

// removeWhenFree removes a group's directory, retrying while the kernel
// still reports it busy (a killed task may take a moment to leave).
func removeWhenFree(dir string, deadline time.Time) error {
	for {
		err := removeDir(dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("removing %s: %w", dir, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Availability says, for each kind of hierarchy, why a run's group cannot
// be made there ("" when it can), without making anything: what New would
// find, for a report such as 'sandboxlab doctor'.
type Availability struct {
	// V1 is about the cgroup v1 memory and pids hierarchies.
	V1 string
	// V2 is about a delegated cgroup v2 subtree.
	V2 string
	// Controllers lists the v1 controllers mounted for the caller, and
	// V2Controllers those the unified hierarchy offers it.
	Controllers, V2Controllers []string
}

// Usable reports whether a run's group can be made somewhere.
func (a Availability) Usable() bool { return a.V1 == "" || a.V2 == "" }

// Remedy is what to do when no hierarchy is usable.
const Remedy = remedy

// Available examines the caller's hierarchies as New would.
func Available() (Availability, error) {
	m, err := Detect()
	if err != nil {
		return Availability{}, err
	}
	a := Availability{V1: v1Unusable(m.V1), V2: v2Unusable(m.V2)}
	for ctl := range m.V1 {
		a.Controllers = append(a.Controllers, ctl)
	}
	slices.Sort(a.Controllers)
	if m.V2 != "" {
		if ctls, err := readWords(m.V2, "cgroup.controllers"); err == nil {
			for ctl := range ctls {
				a.V2Controllers = append(a.V2Controllers, ctl)
			}
			slices.Sort(a.V2Controllers)
		}
	}
	return a, nil
}
