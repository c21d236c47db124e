package boot

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"sandboxlab/mutants"
	"sandboxlab/sandbox/landlock"
	"sandboxlab/sandbox/reexec"
	"sandboxlab/sandbox/seccomp"
)

// Arg0 is the argv[0] under which the sandbox re-executes its own
// binary (/proc/self/exe) as the in-namespace init. Any program that
// imports this package serves as the init: it takes over from this
// package's initialiser (reexec.RegisterEarly).
const Arg0 = "sandboxlab-init"

// ErrFD is the descriptor on which the init reports a failed set-up.
// It is close-on-exec, so a successful exec closes it with nothing written.
const ErrFD = 3

// Config is what the init needs to know, passed in argv[1] (see
// EncodeConfig). The program's path and arguments follow in argv[2:]; its
// environment is the init's own, less the head the init keeps (OwnEnv).
type Config struct {
	// Defect is the planted defect active in the harness ("" for none). It
	// travels on the command line, never in the environment, and is gone
	// once the init execs the program.
	Defect string
	// Cover is the descriptor on which the init reports the planted sites
	// it asks, when the harness records coverage (0: it does not).
	Cover int
	// PrivateMounts makes every mount private before anything is mounted
	// (CLONE_NEWNS alone does not stop propagation to the host).
	PrivateMounts bool
	// MountProc mounts a fresh /proc for the new PID namespace.
	MountProc bool
	// OwnIdentity names the run, masks the host's identity in its /proc
	// and roots a cgroup namespace at its group (see Hardened.OwnIdentity).
	OwnIdentity bool
	// Hide lists paths to cover (see Filesystem.Hide).
	Hide []string
	// Private lists directories to cover with a private tmpfs, and Session
	// is the session's directory, bound back in at its path (see
	// Filesystem.Private).
	Private []string
	Session string
	// Root is the allowlist root to build and pivot into (see
	// Filesystem.Expose); nil: the host's tree, as L5 shows it.
	Root *RootSpec
	// FreshKeyring joins a new session keyring (see Filesystem.FreshKeyring).
	FreshKeyring bool
	// CgroupTasks is how many tasks files of the run's control group (one
	// per cgroup v1 hierarchy) the init holds from CgroupTasksFD on: it
	// joins the group through them just before it execs the program.
	CgroupTasks int
	// CgroupHome is how many tasks files of the groups the run's group
	// was made in follow those of the run's group (v1, with OwnIdentity;
	// see enterCgroupNamespace).
	CgroupHome int
	// Landlock restricts the filesystem (see Hardened.Landlock); nil: no
	// Landlock. LandlockABI is the least ABI accepted.
	Landlock    *landlock.Rules
	LandlockABI int
	// SyscallFilter installs the seccomp filter (see Hardened.SyscallFilter).
	SyscallFilter bool
	// NoNewPrivs sets no_new_privs (see Hardened.NoNewPrivs).
	NoNewPrivs bool
	// DropCaps drops every capability (see Filesystem.DropCapabilities).
	DropCaps bool
	// Rlimits are set last, just before exec.
	Rlimits []Rlimit
	// OwnEnv is how many entries at the head of the init's environment
	// are the init's own (Env): the program gets the rest.
	OwnEnv int
	// Egress opens the program's way to the egress proxy (see
	// egressRelay); nil: none.
	Egress *EgressInit
	// Reaper keeps the init as PID 1 and runs the program as its child
	// (see reaper.go); nil: the init execs the program.
	Reaper *ReaperInit
	// Await is the descriptor on which a pre-started init waits, its
	// set-up done, for the run's go record (see warm.go); 0: the program's
	// argv and environment are the init's own, and it goes at once.
	Await int
}

// Env is the init's own environment, put before the program's and
// dropped again at exec. The Go runtime reads it before any of the
// init's code runs (the first of a repeated name wins): with one
// processor from the start, setting it to one later costs no stop of
// the world.
var Env = []string{"GOMAXPROCS=1"}

func init() { reexec.RegisterEarly(Arg0, initMain) }

// initMain is the init's body: argv is the encoded config and the program's
// path and arguments.
func initMain(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, Arg0+": want CONFIG PROGRAM [ARGS]")
		return 125
	}
	errPipe := os.NewFile(ErrFD, "init-errors")
	// Mounts, capabilities and no_new_privs are per thread or must be
	// followed by exec from the thread that set them: stay on one. The
	// init runs from a package initialiser (reexec.RegisterEarly), and Go
	// runs every initialiser on the process's first thread, without the
	// template thread that runtime.LockOSThread would start; refuse to go
	// on anywhere else.
	runtime.GOMAXPROCS(1)
	if unix.Gettid() != unix.Getpid() {
		errPipe.Write(Record{Kind: InitSetupFailed, Step: StepStart, Message: "the init is not on its first thread"}.Encode())
		return 125
	}
	// Descriptors the harness inherited without close-on-exec would pass
	// straight into the program: close everything above stderr at exec.
	unix.CloseRange(ErrFD, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	err := runInit(args[0], args[1:])
	switch {
	case err == nil:
		return 0 // the reaper has reported how the program ended
	case errors.Is(err, errReported):
		return 125
	case errors.Is(err, errDismissed):
		return 0 // a pre-started init that was not used: nothing to report
	}
	errPipe.Write(recordOf(err).Encode())
	return 125
}

// runInit sets the sandbox up and execs the program, or, as the
// program's reaper, runs it and returns nil once it has reported its end.
// Otherwise it returns only on failure, with the step that failed (see
// initFailure), or errReported when the record is already sent.
func runInit(config string, argv []string) error {
	var cfg Config
	if err := DecodeConfig(config, &cfg); err != nil {
		return failedAt(StepStart, err)
	}
	for _, s := range setupSteps {
		if err := s.run(&cfg); err != nil {
			return failedAt(s.step, err)
		}
	}
	env := os.Environ()
	if cfg.OwnEnv > len(env) {
		return failedAt(StepEnvironment, fmt.Errorf("the init's environment lacks its own %d entries", cfg.OwnEnv))
	}
	env = env[cfg.OwnEnv:]
	var sigs chan os.Signal
	if cfg.Await > 0 {
		if cfg.Reaper != nil {
			// What a cold init does once the program runs (see
			// catchDelay), a waiting one does before: it has the time.
			sigs = make(chan os.Signal, 16)
			catchSignals(sigs)
		}
		rec, err := awaitGo(cfg.Await)
		if err != nil {
			return err
		}
		if (rec.Reaper == nil) != (cfg.Reaper == nil) {
			return failedAt(StepStart, errors.New("the go record and the config disagree on the reaper"))
		}
		argv, env, cfg.Reaper = rec.Args, rec.Env, rec.Reaper
	}
	plan, err := newExecPlan(argv, env, cfg.Rlimits)
	if err != nil {
		return err
	}
	if cfg.Reaper != nil {
		plan.groupFDs = cfg.CgroupTasks // joined by the program's process, not the init
		return reap(cfg.Reaper, plan, sigs)
	}
	plan.run()
	return nil // not reached
}

// setupSteps are the init's steps before the exec, in order; each does
// nothing where the config does not ask for it. Loopback and the proxy's
// port need CAP_NET_ADMIN and a bind that Landlock would refuse: before
// both are gone. The filter goes last but one: after it the init only
// joins its control group, sets limits and execs. The program must start
// in the run's control group, and the init's own set-up need not: it
// joins last, from the thread that execs.
var setupSteps = []struct {
	step InitStep
	run  func(*Config) error
}{
	{StepStart, switchDefects},
	{StepEgress, openEgress},
	{StepPrivateMounts, makeMountsPrivate},
	{StepMountProc, mountProc},
	{StepIdentity, takeOwnIdentity},
	{StepHide, hidePaths},
	{StepPrivateDirs, coverPrivateDirs},
	{StepRoot, enterRoot},
	{StepKeyring, freshKeyring},
	{StepCapabilities, dropCapabilities},
	{StepNoNewPrivs, setNoNewPrivs},
	{StepLandlock, restrictLandlock},
	{StepSeccomp, installFilter},
	{StepCgroup, joinRunGroup},
}

// switchDefects turns on the planted defect the harness asked for, and
// the report of the sites asked.
func switchDefects(cfg *Config) error {
	if err := mutants.Enable(cfg.Defect); err != nil {
		return err
	}
	if cfg.Cover > 0 {
		return mutants.Cover(cfg.Cover)
	}
	return nil
}

func openEgress(cfg *Config) error {
	if cfg.Egress == nil {
		return nil
	}
	return cfg.Egress.open()
}

func makeMountsPrivate(cfg *Config) error {
	if !cfg.PrivateMounts {
		return nil
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	return nil
}

func mountProc(cfg *Config) error {
	if !cfg.MountProc {
		return nil
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting proc on /proc: %w", err)
	}
	return nil
}

// runHostname is the host name of every run (bubblewrap and podman
// name theirs too): the same for all, so that it tells nothing of the
// host or the session.
const runHostname = "sandbox"

// hostIdentityFiles are the files of /proc that show the host's identity
// in every namespace: the boot id, the kernel's command line, and every
// lock on the machine with its holder's inode and device. Each is
// covered with /dev/null, as runc masks files.
var hostIdentityFiles = []string{"/proc/sys/kernel/random/boot_id", "/proc/cmdline", "/proc/locks"}

// takeOwnIdentity names the run in its UTS namespace and masks the
// host's identity in its /proc, before the root clones /proc with what
// is mounted on it.
func takeOwnIdentity(cfg *Config) error {
	if !cfg.OwnIdentity {
		return nil
	}
	if !mutants.On(mutants.HostnameShared) {
		if err := unix.Sethostname([]byte(runHostname)); err != nil {
			return fmt.Errorf("naming the run %s: %w", runHostname, err)
		}
		if err := unix.Setdomainname([]byte("(none)")); err != nil {
			return fmt.Errorf("clearing the run's domain name: %w", err)
		}
	}
	if !mutants.On(mutants.CgroupNSShared) {
		if err := enterCgroupNamespace(cfg); err != nil {
			return err
		}
	}
	if !mutants.On(mutants.UptimeShared) {
		if err := ownClocks(); err != nil {
			return err
		}
	}
	if mutants.On(mutants.ProcIdentityOpen) {
		return nil
	}
	for _, path := range hostIdentityFiles {
		if err := hide(path); err != nil {
			return err
		}
	}
	return nil
}

// ownClocks gives the program a time namespace whose monotonic and boot
// clocks start at the run's set-up: /proc/uptime and /proc/stat's btime
// would otherwise tell how long the host has been up and when it booted,
// which fingerprints the machine. The init itself stays on the host's
// clocks, on which its deadline is counted; the program enters the
// namespace at its exec (the kernel moves a task to its time namespace
// for children when it gets a new memory map).
func ownClocks() error {
	if err := unix.Unshare(unix.CLONE_NEWTIME); err != nil {
		return fmt.Errorf("unsharing a time namespace: %w", err)
	}
	var mono, boot unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono); err != nil {
		return fmt.Errorf("reading the monotonic clock: %w", err)
	}
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot); err != nil {
		return fmt.Errorf("reading the boot clock: %w", err)
	}
	// Whole seconds back: the clocks read from 0 to 1 s at the set-up
	// and can never go below 0, which the kernel refuses (ERANGE).
	offsets := fmt.Sprintf("monotonic %d 0\nboottime %d 0\n", -mono.Sec, -boot.Sec)
	// The file is the process's, and sets the offsets of its leader's
	// namespace for children: the init sets up on its first thread, the
	// leader (see initMain), the one that unshared.
	if err := os.WriteFile("/proc/self/timens_offsets", []byte(offsets), 0); err != nil {
		return fmt.Errorf("setting the time namespace's clocks: %w", err)
	}
	return nil
}

// enterCgroupNamespace gives the init's thread, and so the program, a
// cgroup namespace rooted at the run's group: /proc/self/cgroup then
// shows "/" where it showed the group's path below the harness's. A
// namespace is rooted where its creator is, so on v1 the thread joins
// the run's group, unshares, and goes back to the parent: the init stays
// out of the group (its limits and process count are the program's),
// and its threads show as "/.." from inside. On v2 the init was cloned
// into the group, and stays there.
func enterCgroupNamespace(cfg *Config) error {
	if cfg.CgroupHome == 0 { // v2, or no group: the init is where the root belongs
		if err := unix.Unshare(unix.CLONE_NEWCGROUP); err != nil {
			return fmt.Errorf("making a cgroup namespace: %w", err)
		}
		return nil
	}
	for i := 0; i < cfg.CgroupTasks; i++ {
		if err := writeTasks(CgroupTasksFD + i); err != nil {
			return fmt.Errorf("joining the run's control group to root a namespace there: %w", err)
		}
	}
	if err := unix.Unshare(unix.CLONE_NEWCGROUP); err != nil {
		return fmt.Errorf("making a cgroup namespace: %w", err)
	}
	for fd := CgroupTasksFD + cfg.CgroupTasks; fd < CgroupTasksFD+cfg.CgroupTasks+cfg.CgroupHome; fd++ {
		if err := writeTasks(fd); err != nil {
			return fmt.Errorf("leaving the run's control group: %w", err)
		}
		unix.Close(fd)
	}
	return nil
}

func hidePaths(cfg *Config) error {
	if len(cfg.Hide) == 0 || mutants.On(mutants.NoMountHide) {
		return nil
	}
	for _, path := range cfg.Hide {
		if err := hide(path); err != nil {
			return err
		}
	}
	return nil
}

func coverPrivateDirs(cfg *Config) error {
	if len(cfg.Private) == 0 {
		return nil
	}
	return makePrivate(cfg.Private, cfg.Session)
}

func freshKeyring(cfg *Config) error {
	if !cfg.FreshKeyring || mutants.On(mutants.KeyringInherited) {
		return nil
	}
	return joinFreshKeyring()
}

func dropCapabilities(cfg *Config) error {
	if !cfg.DropCaps || mutants.On(mutants.CapsKept) {
		return nil
	}
	return dropPrivileges()
}

func setNoNewPrivs(cfg *Config) error {
	if !cfg.NoNewPrivs {
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	return nil
}

func restrictLandlock(cfg *Config) error {
	if cfg.Landlock == nil {
		return nil
	}
	_, err := landlock.Restrict(*cfg.Landlock, cfg.LandlockABI)
	return err
}

func installFilter(cfg *Config) error {
	if !cfg.SyscallFilter || mutants.On(mutants.NoSeccomp) {
		return nil
	}
	prog, err := seccomp.Build()
	if err == nil {
		err = seccomp.Install(prog)
	}
	if err != nil {
		return fmt.Errorf("installing the system-call filter: %w", err)
	}
	return nil
}

func joinRunGroup(cfg *Config) error {
	if cfg.CgroupTasks == 0 || cfg.Reaper != nil { // the reaper stays out: see execPlan.run
		return nil
	}
	return joinCgroup(cfg.CgroupTasks)
}

// execPlan is everything the exec of the program needs, made before the
// first resource limit is set: under RLIMIT_AS the Go runtime may be
// unable to map another heap arena, and a failed allocation would crash
// the init instead of running the program. As the program's reaper, the
// init runs it in a forked child (see forkProgram), where only bare
// system calls are safe. The records it may send are made here too.
type execPlan struct {
	path       *byte
	argv, env  []*byte
	limits     []unix.Rlimit
	resources  []uintptr
	limitFails [][]byte // a record for each limit
	execFailed []byte
	// groupFDs is how many tasks files of the run's control group the
	// program's process joins from CgroupTasksFD on (the reaper's child;
	// 0 when the init joined in its own set-up).
	groupFDs    int
	groupFailed []byte
	// sigmask is restored just before the exec when restoreMask is set
	// (the reaper's child, cloned with every signal blocked), after every
	// handler is reset when resetHandlers is (a child sharing the init's
	// memory must never run the init's handlers: see forkProgram).
	sigmask       [1]uint64
	restoreMask   bool
	resetHandlers bool
	// unignore is the set of signals (bit n-1 for signal n) the init made
	// ignored for itself (shieldSignals), set back to the default before
	// the exec: exec would keep them ignored.
	unignore uint64
	// statusFD gets a byte when the exec fails (-1: none): the reaper
	// learns from it whether its child became the program.
	statusFD int
	zero     [1]byte // "0": the writer itself, to a tasks file
}

// newExecPlan makes the plan to exec argv with environ under rlimits.
func newExecPlan(argv, environ []string, rlimits []Rlimit) (*execPlan, error) {
	e := &execPlan{statusFD: -1, zero: [1]byte{'0'}}
	var err error
	if e.path, err = unix.BytePtrFromString(argv[0]); err != nil {
		return nil, &initFailure{kind: InitExecFailed, step: StepExec, err: err}
	}
	if e.argv, err = cStrings(argv); err != nil {
		return nil, &initFailure{kind: InitExecFailed, step: StepExec, err: err}
	}
	if e.env, err = cStrings(environ); err != nil {
		return nil, failedAt(StepEnvironment, err)
	}
	for _, rl := range rlimits {
		e.limits = append(e.limits, unix.Rlimit{Cur: rl.Cur, Max: rl.Max})
		e.resources = append(e.resources, uintptr(rl.Resource))
		e.limitFails = append(e.limitFails, Record{Kind: InitSetupFailed, Step: StepRlimits, Message: "setting " + rlimitName(rl.Resource)}.Encode())
	}
	e.execFailed = Record{Kind: InitExecFailed, Step: StepExec}.Encode()
	e.groupFailed = Record{Kind: InitSetupFailed, Step: StepCgroup, Message: "joining the run's control group"}.Encode()
	return e, nil
}

// run joins the control group, sets the limits and execs the program,
// with bare system calls and no allocation; it returns only by exiting.
// It is nosplit (and so calls nothing that is not) because in a forked
// child a stack check could call into the runtime, whose other threads
// do not exist there.
//
//go:nosplit
//go:norace
func (e *execPlan) run() {
	for i := 0; i < e.groupFDs; i++ {
		for {
			_, _, errno := syscall.RawSyscall(unix.SYS_WRITE, uintptr(CgroupTasksFD+i), uintptr(unsafe.Pointer(&e.zero[0])), 1)
			if errno == unix.EINTR {
				continue
			}
			if errno != 0 {
				e.fail(e.groupFailed, errno)
			}
			break
		}
	}
	// Raw prlimit also keeps the runtime from restoring its own
	// RLIMIT_NOFILE at exec (it only does that inside syscall.Exec).
	for i := 0; i < len(e.limits); i++ {
		_, _, errno := syscall.RawSyscall6(unix.SYS_PRLIMIT64, 0, e.resources[i], uintptr(unsafe.Pointer(&e.limits[i])), 0, 0, 0)
		if errno != 0 {
			e.fail(e.limitFails[i], errno)
		}
	}
	if e.resetHandlers || e.unignore != 0 {
		resetSignalHandlers(e.unignore)
	}
	if e.restoreMask {
		syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&e.sigmask[0])), 0, 8, 0, 0)
	}
	_, _, errno := syscall.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(e.path)), uintptr(unsafe.Pointer(&e.argv[0])), uintptr(unsafe.Pointer(&e.env[0])))
	e.fail(e.execFailed, errno)
}

// kernelSigaction is the kernel's struct sigaction for rt_sigaction on
// the architectures that clone sharing memory (amd64, arm64).
type kernelSigaction struct {
	handler, flags, restorer uintptr
	mask                     uint64
}

// resetSignalHandlers sets every signal's handler to the default, as exec
// would. An ignored signal stays ignored, as exec keeps it, unless it is
// in unignore.
//
//go:nosplit
//go:norace
func resetSignalHandlers(unignore uint64) {
	var dfl, old kernelSigaction
	for sig := uintptr(1); sig <= 64; sig++ {
		if sig == uintptr(unix.SIGKILL) || sig == uintptr(unix.SIGSTOP) {
			continue
		}
		syscall.RawSyscall6(unix.SYS_RT_SIGACTION, sig, uintptr(unsafe.Pointer(&dfl)), uintptr(unsafe.Pointer(&old)), 8, 0, 0)
		if old.handler == 1 && unignore&(1<<(sig-1)) == 0 { // SIG_IGN
			syscall.RawSyscall6(unix.SYS_RT_SIGACTION, sig, uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
		}
	}
}

// fail puts the errno into record, writes it on the error pipe in one
// write (and a byte on the status pipe, if any) and exits, allocating
// nothing.
//
//go:nosplit
//go:norace
func (e *execPlan) fail(record []byte, errno syscall.Errno) {
	record[RecordErrno] = byte(errno)
	record[RecordErrno+1] = byte(errno >> 8)
	record[RecordErrno+2] = byte(errno >> 16)
	record[RecordErrno+3] = byte(errno >> 24)
	syscall.RawSyscall(unix.SYS_WRITE, ErrFD, uintptr(unsafe.Pointer(&record[0])), uintptr(len(record)))
	if e.statusFD >= 0 {
		syscall.RawSyscall(unix.SYS_WRITE, uintptr(e.statusFD), uintptr(unsafe.Pointer(&record[0])), 1)
	}
	syscall.RawSyscall(unix.SYS_EXIT_GROUP, 125, 0, 0)
}

// rlimitName names a resource the init limits.
func rlimitName(resource int) string {
	switch resource {
	case unix.RLIMIT_CPU:
		return "RLIMIT_CPU"
	case unix.RLIMIT_AS:
		return "RLIMIT_AS"
	case unix.RLIMIT_FSIZE:
		return "RLIMIT_FSIZE"
	case unix.RLIMIT_CORE:
		return "RLIMIT_CORE"
	case unix.RLIMIT_NOFILE:
		return "RLIMIT_NOFILE"
	case unix.RLIMIT_NPROC:
		return "RLIMIT_NPROC"
	}
	return "resource limit " + strconv.Itoa(resource)
}

// hide covers path in this mount namespace: a directory by an empty
// tmpfs, anything else by /dev/null.
func hide(path string) error {
	st, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("hiding %s: %w", path, err)
	}
	if st.IsDir() {
		// Small and owned by nobody: writes into it go nowhere and cannot
		// fill the host's memory.
		if err := unix.Mount("tmpfs", path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=1m,nr_inodes=64,mode=0755"); err != nil {
			return fmt.Errorf("mounting tmpfs on %s: %w", path, err)
		}
		return nil
	}
	if err := unix.Mount("/dev/null", path, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("binding /dev/null over %s: %w", path, err)
	}
	return nil
}

// dropPrivileges leaves "root" in the user namespace with nothing: no new
// user namespaces (which would hand back a full capability set), an empty
// bounding set (so exec as uid 0 grants nothing), no capabilities and
// no_new_privs.
func dropPrivileges() error {
	if err := os.WriteFile("/proc/sys/user/max_user_namespaces", []byte("0\n"), 0); err != nil {
		return fmt.Errorf("forbidding nested user namespaces: %w", err)
	}
	// The running kernel may know more capabilities than this build's
	// headers: drop until it says there are no more (EINVAL).
	for c := 0; ; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if err == unix.EINVAL && c > unix.CAP_LAST_CAP/2 {
			break
		}
		if err != nil {
			return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clearing capabilities: %w", err)
	}
	return nil
}

// cStrings returns a NULL-terminated array of C strings for execve.
func cStrings(ss []string) ([]*byte, error) {
	out := make([]*byte, len(ss)+1)
	for i, s := range ss {
		p, err := unix.BytePtrFromString(s)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

// Rlimit is one resource limit the init sets before it execs the program.
type Rlimit struct {
	Resource int
	Cur, Max uint64
}
