package sandbox

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/mutants"
	"sandboxlab/sandbox/boot"
	"sandboxlab/sandbox/egress"
)

// Policy says which layers of isolation a run gets. Each field is one
// layer; Preset(n) switches on layers 0..n. A zero field switches its layer
// off, so a check can take one layer away to see another bite.
type Policy struct {
	// Level is the preset the policy was made from (0–5). It is reported in
	// Result and reports; changing fields does not change it.
	Level int

	// Watchdog bounds every run, whatever else is off, so that nothing can
	// hang the harness (L0: 4 s). It kills the program when the time is up
	// and the run counts as timed out. Zero means no watchdog.
	Watchdog time.Duration

	// Limits is L1: resource limits set before the program starts, and the
	// supervision of its process tree.
	Limits Limits

	// Workspace is L2: what the program finds around it when it starts.
	Workspace Workspace

	// Processes is L3: its own process tree and a cap on its size.
	Processes Processes

	// Network is L4.
	Network Network

	// Filesystem is L5: what the program can see of the host's files, and
	// what privileges it holds.
	Filesystem Filesystem

	// Hardened is L6: what the kernel enforces beyond the namespaces.
	Hardened Hardened
}

// Limits is the L1 layer.
type Limits struct {
	// Wall stops the run after this much wall-clock time (L1: 1.5 s).
	Wall time.Duration
	// CPU is the soft RLIMIT_CPU (whole seconds; L1: 2 s). The kernel sends
	// SIGXCPU when it is reached.
	CPU time.Duration
	// CPUHard is the hard RLIMIT_CPU (L1: 3 s), where the kernel sends
	// SIGKILL. It must be set above CPU: PID 1 of a PID namespace ignores
	// SIGXCPU, so the soft limit alone does nothing there. Zero means no
	// hard limit (used only to demonstrate that quirk).
	CPUHard time.Duration
	// AddressSpace is RLIMIT_AS in bytes (L1: 256 MiB).
	AddressSpace int64
	// FileSize is RLIMIT_FSIZE in bytes (L1: 10 MiB). With it, RLIMIT_CORE
	// is set to 0: a program killed by SIGXCPU would otherwise leave a core
	// file in the session directory, against its quota.
	FileSize int64
	// OpenFiles is RLIMIT_NOFILE (L1: 64).
	OpenFiles int
	// OutputChars is how many characters of each stream are returned (L1:
	// 8,000): the first 60% and the last 40% around a marker that says how
	// many bytes were left out. Zero returns (and holds) everything.
	OutputChars int
	// OutputHeld is the most the harness ever holds of one stream, in bytes
	// (L1: 8 MiB). The bytes needed for OutputChars must fit in it.
	OutputHeld int64
	// KillTree runs the program in a session of its own and, on a timeout,
	// kills the process, its children and its whole session; without it
	// only the process is killed.
	KillTree bool
	// Sweep kills whatever is left of the program's session after it ends
	// normally.
	Sweep bool
}

// Workspace is the L2 layer.
type Workspace struct {
	// ScrubEnv starts the program with only PATH, LANG, HOME and TMPDIR,
	// HOME and TMPDIR pointing into the session's directory.
	ScrubEnv bool
	// Private runs the program in the session's own directory (0700, kept
	// across the session's runs) instead of the application's directory.
	Private bool
}

// Processes is the L3 layer.
type Processes struct {
	// Namespace runs the program in a user and a PID namespace of its own,
	// with its own /proc. It is root there, mapped to an unprivileged host
	// identity (see HostIdentity). When the program (PID 1) ends, the
	// kernel kills everything else in the namespace.
	Namespace bool
	// Max stops the run when more than Max of its processes are alive
	// (L3: 16). A monitor walks /proc every Interval to count them.
	Max int
	// Interval is how often the monitor walks /proc (L3: 5 ms).
	Interval time.Duration
	// Reaper (L6) keeps the sandbox's init in the namespace as its PID 1
	// and runs the program as PID 2 (see reaper.go): the init reaps every
	// process, forwards SIGTERM, SIGINT, SIGHUP and SIGWINCH to the
	// program, and holds the run's deadline itself, ending the namespace
	// when it is up, so that a stop does not wait for the caller's process
	// to be scheduled; the caller keeps a backstop (BackstopGrace later).
	// As PID 2 the program gets SIGXCPU at the soft CPU limit. Without
	// Namespace it does nothing: L3 to L5 keep the program as PID 1.
	Reaper bool
}

// Network is the L4 layer, and the destinations it may let through.
//
// With Allow empty the program has no network at all. With Allow set, its
// only way out is the egress proxy (package egress), which runs in the
// process calling Run and decides and logs every request (Result.Network):
// the init brings loopback up in the program's network namespace and binds
// EgressProxy there, hands that listener to the host and execs the program
// with HTTP_PROXY and HTTPS_PROXY (and their lower-case forms) naming it.
// Every other connection still fails: the namespace has nothing but
// loopback, and at L6 Landlock allows TCP connect to the proxy's port
// alone.
type Network struct {
	// Isolate gives the program a network namespace with no interface up,
	// not even loopback: connect fails at once with ENETUNREACH.
	Isolate bool
	// Allow lists the destinations the program may reach through the
	// proxy, as host:port patterns: an exact name, "*." and a name for
	// its subdomains only (label by label: "*.example.com" admits
	// "api.example.com", never "example.com" or "evilexample.com"), or
	// an IP address, which matches only that address, never a name that
	// resolves to it; the port is a number or "*". It needs Isolate.
	Allow []string
	// Deny lists patterns of the same form that are refused even when
	// Allow admits them: a deny wins.
	Deny []string
	// Credentials are headers the proxy adds to the program's plain-HTTP
	// requests for one destination each (an API key, say), and to no
	// others. The program never holds them: they are not in its
	// environment, files or arguments. They need Workspace.ScrubEnv, so
	// that the caller's environment, which may hold them, stays out. A
	// CONNECT tunnel (HTTPS) is not inspected and cannot carry one.
	Credentials []Credential
	// Resolve maps names to the addresses the proxy connects to for them,
	// before DNS is asked: tests and local set-ups point allowed names at
	// loopback servers. DNS answers inside the host's own networks
	// (loopback, private, link-local) are refused; the map is the way to
	// allow those.
	Resolve map[string]string
}

// Credential is a header the egress proxy adds for one destination.
// Its String, GoString and MarshalJSON leave the value out.
type Credential = egress.Credential

// EgressProxy is where the program finds the egress proxy when
// Network.Allow is set: this address in its own network namespace.
const EgressProxy = "127.0.0.1:3128"

// egressPort is EgressProxy's port.
const egressPort = 3128

// Egress reports whether the program's requests go through the egress
// proxy, which only a binary that links package egress/proxy serves.
func (n Network) Egress() bool { return n.Isolate && len(n.Allow) > 0 }

// egressConfig is the proxy's configuration.
func (n Network) egressConfig() egress.Config {
	return egress.Config{Allow: n.Allow, Deny: n.Deny, Credentials: n.Credentials, Resolve: n.Resolve}
}

// Filesystem is the L5 layer: what the program can see and leave behind
// of the host, whom it shares kernel objects with, and what privileges it
// holds.
type Filesystem struct {
	// Hide lists host paths the program must not see: a directory is
	// covered by an empty tmpfs, a file by /dev/null, in the program's own
	// mount namespace. The host's files are untouched and writes into them
	// go nowhere. Paths that do not exist are skipped.
	Hide []string
	// Private lists the host's scratch directories (L5: DefaultPrivate:
	// /tmp, /var/tmp, /dev/shm, /run and /dev/mqueue) that the program gets
	// an empty, private tmpfs over: what it writes there goes nowhere on the
	// host and is gone after the run, the host's sockets and files there are
	// out of its reach, and so are other sessions' directories. The
	// session's own directory is bound back in at its path; when it does
	// not lie below one of these, its parent directory is covered too, so
	// that sibling sessions stay out of sight wherever Options.Root is.
	// Directories that do not exist are skipped.
	Private []string
	// Expose, when set (L6: DefaultExposed), gives the program a root of
	// its own instead of the host's tree with paths hidden: a fresh,
	// read-only tmpfs that holds these host paths bound read-only (a
	// symbolic link is made again as a link), a /dev with the usual
	// character devices, a fresh /proc, the session's directory at its
	// path and the Private directories. Nothing else of the host exists
	// there: its other directories, files and sockets are absent, not
	// covered, and so are their modes, times and attributes. The init
	// pivots into it. An entry may be a pattern (filepath.Match: "*",
	// "?", "[...]"), expanded on the host at each run. Paths the host
	// lacks are skipped; Hide still covers what lies below an exposed
	// path. The program and its working directory are bound in too when
	// nothing exposed holds them.
	Expose []string
	// OwnIPC gives the program an IPC namespace (System V shared memory,
	// message queues and semaphores, POSIX message queues) and a UTS
	// namespace (host name) of its own: nothing it makes there outlives the
	// run or is seen by anyone else.
	OwnIPC bool
	// FreshKeyring gives the program a new, empty session keyring instead
	// of the one it would inherit from the harness, with whatever keys the
	// harness's session holds.
	FreshKeyring bool
	// DropCapabilities empties the capability bounding set and every
	// capability set, sets no_new_privs, and forbids new user namespaces, so
	// that "root" in the sandbox cannot mount, and cannot get capabilities
	// back through a nested namespace either.
	DropCapabilities bool
}

// Hardened is the L6 layer: a system-call filter, Landlock and a control
// group per run.
type Hardened struct {
	// NoNewPrivs sets no_new_privs in the init, which the filter and
	// Landlock need, whether or not DropCapabilities (which sets it too)
	// is on: a check can then keep the capabilities and see the filter
	// bite alone.
	NoNewPrivs bool
	// SyscallFilter installs a seccomp-bpf filter (package seccomp) in the
	// init, after no_new_privs and just before exec: the kernel's attack
	// surface (io_uring, perf_event_open, userfaultfd, bpf), the keyring,
	// ptrace, kexec and modules, the mount family, new namespaces, TIOCSTI,
	// personality changes and socket families other than Unix, IPv4 and
	// IPv6 are refused, and any other architecture's entry point kills.
	SyscallFilter bool
	// Landlock lets the program read and execute only beneath the system's
	// directories and its own path, and read and write only its session
	// directory, its private directories and a few devices; TCP bind and
	// connect are denied (Landlock ABI 4) and abstract Unix sockets and
	// signals kept inside (ABI 6) where the kernel has them.
	Landlock bool
	// LandlockABI is the least Landlock ABI the policy accepts: below it,
	// the run is refused.
	LandlockABI int
	// Cgroup is a control group of the run's own, made before the program
	// starts and removed after it.
	Cgroup Cgroup
	// SessionInodes, when set (L6: DefaultSessionInodes), caps the disk
	// inside every run, by the kernel: the session's directory is a
	// filesystem of its own, made with the session, of the session's
	// quota in bytes and this many files, directories and links, so that
	// a write past either fails (ENOSPC) in the run that tries it, and a
	// run that failed so ends with ReasonDisk. It needs the caller to be
	// host root (the filesystem is mounted on the host); otherwise, and
	// for a session made without one, the run is refused
	// (ErrUnavailable). Zero keeps only the quota's check before each run.
	SessionInodes int
	// OwnIdentity gives the run an identity of its own instead of the
	// host's: the host name "sandbox" in its UTS namespace, the boot id,
	// the kernel's command line and the lock list of its /proc masked
	// (the kernel shows the host's in every namespace), a cgroup
	// namespace rooted at the run's control group, a time namespace whose
	// clocks start at the run's set-up, and, in a root of its own
	// (Filesystem.Expose), the session at SessionMount. It needs
	// Filesystem.OwnIPC, which brings the UTS namespace, and
	// Processes.Namespace, which brings the run's own /proc.
	OwnIdentity bool
}

// Cgroup is the control group of a run. A zero field sets no such limit;
// all zero, there is no group.
type Cgroup struct {
	// Memory limits the real memory (RAM, no swap) of the whole run, in
	// bytes: past it the kernel's OOM killer stops the program, and the
	// kernel's count of OOM kills sets Result.OOM.
	Memory int64
	// Pids is the most processes and threads alive at once (pids.max):
	// the next fork fails with EAGAIN, with no polling window.
	Pids int
	// CPUWeight is the run's CPU share, 1 to 10000 (100 is the default
	// weight: every run gets an equal share, so busy neighbours cannot
	// starve it).
	CPUWeight int
}

// on reports whether the run gets a control group.
func (c Cgroup) on() bool { return c.Memory > 0 || c.Pids > 0 || c.CPUWeight > 0 }

// Levels is the number of presets: L0 … L6.
const Levels = 7

// LevelNames names each preset by what it adds.
var LevelNames = [Levels]string{"bare", "limits", "env and cwd", "processes", "network", "filesystem and capabilities", "hardened"}

// ErrInvalidPolicy wraps every error from Policy.Validate.
var ErrInvalidPolicy = errors.New("invalid policy")

// Preset returns the policy of level n: layers 0..n switched on with the
// values of the course notes.
func Preset(n int) (Policy, error) {
	if n < 0 || n >= Levels {
		return Policy{}, fmt.Errorf("%w: level %d: want 0 to %d", ErrInvalidPolicy, n, Levels-1)
	}
	p := Policy{Level: n, Watchdog: 4 * time.Second}
	if n >= 1 {
		p.Limits = Limits{
			Wall:         1500 * time.Millisecond,
			CPU:          2 * time.Second,
			CPUHard:      3 * time.Second,
			AddressSpace: 256 << 20,
			FileSize:     10 << 20,
			OpenFiles:    64,
			OutputChars:  8000,
			OutputHeld:   8 << 20,
			KillTree:     true,
			Sweep:        true,
		}
	}
	if n >= 2 {
		p.Workspace = Workspace{ScrubEnv: true, Private: true}
	}
	if n >= 3 {
		p.Processes = Processes{Namespace: true, Max: 16, Interval: 5 * time.Millisecond}
	}
	if n >= 4 {
		p.Network = Network{Isolate: true}
	}
	if n >= 5 {
		p.Filesystem = Filesystem{Hide: DefaultHidden(), Private: DefaultPrivate(), OwnIPC: true, FreshKeyring: true, DropCapabilities: true}
	}
	if n >= 6 {
		p.Processes.Reaper = true
		p.Filesystem.Expose = DefaultExposed()
		p.Hardened = Hardened{NoNewPrivs: true, SyscallFilter: true, Landlock: true, LandlockABI: 1,
			Cgroup: Cgroup{Memory: 256 << 20, Pids: 16, CPUWeight: 100}, SessionInodes: DefaultSessionInodes,
			OwnIdentity: true}
		// The limit is on real memory now: a runtime that reserves a large
		// address space but touches little (Go, Java, numpy) can start.
		p.Limits.AddressSpace = 0
	}
	return p, nil
}

// MustPreset is Preset for levels known to be valid.
func MustPreset(n int) Policy {
	p, err := Preset(n)
	if err != nil {
		panic(err)
	}
	return p
}

// DefaultHidden is the L5 preset's list: home directories and the files
// that hold password hashes.
func DefaultHidden() []string {
	paths := []string{"/root", "/home", "/etc/shadow", "/etc/gshadow"}
	if h, err := os.UserHomeDir(); err == nil && h != "/" && !within(h, "/root") && !within(h, "/home") {
		paths = append(paths, h)
	}
	return paths
}

// DefaultPrivate is the L5 preset's list of scratch directories made
// private: the places any user may write on a Linux host (and where host
// services keep their sockets).
func DefaultPrivate() []string {
	return []string{"/tmp", "/var/tmp", "/dev/shm", "/run", "/dev/mqueue"}
}

// TimeLimit is how long a run may take: the wall-clock limit, bounded by
// the watchdog (zero: no limit).
func (p Policy) TimeLimit() time.Duration {
	d := p.Watchdog
	if w := p.Limits.Wall; w > 0 && (d == 0 || w < d) {
		d = w
	}
	return d
}

// userNS reports whether the policy needs a user namespace: every layer
// from L3 up is built inside one.
func (p Policy) userNS() bool {
	f := p.Filesystem
	h := p.Hardened
	return p.Processes.Namespace || p.Network.Isolate || len(f.Hide) > 0 || len(f.Private) > 0 || len(f.Expose) > 0 ||
		f.OwnIPC || f.FreshKeyring || f.DropCapabilities || h.SyscallFilter || h.Landlock
}

// rlimits returns the resource limits of L1.
func (l Limits) rlimits() []rlimit {
	var rl []rlimit
	if l.CPU > 0 && !mutants.On(mutants.NoCPULimit) {
		hard := uint64(unix.RLIM_INFINITY)
		if l.CPUHard > 0 && !mutants.On(mutants.CPUSoftOnly) {
			hard = uint64(l.CPUHard / time.Second)
		}
		rl = append(rl, rlimit{Resource: unix.RLIMIT_CPU, Cur: uint64(l.CPU / time.Second), Max: hard})
	}
	if l.AddressSpace > 0 && !mutants.On(mutants.NoMemoryLimit) {
		rl = append(rl, rlimit{Resource: unix.RLIMIT_AS, Cur: uint64(l.AddressSpace), Max: uint64(l.AddressSpace)})
	}
	if l.FileSize > 0 && !mutants.On(mutants.NoFsizeLimit) {
		rl = append(rl, rlimit{Resource: unix.RLIMIT_FSIZE, Cur: uint64(l.FileSize), Max: uint64(l.FileSize)})
	}
	if l.FileSize > 0 {
		rl = append(rl, rlimit{Resource: unix.RLIMIT_CORE, Cur: 0, Max: 0})
	}
	if l.OpenFiles > 0 && !mutants.On(mutants.NoNofileLimit) {
		rl = append(rl, rlimit{Resource: unix.RLIMIT_NOFILE, Cur: uint64(l.OpenFiles), Max: uint64(l.OpenFiles)})
	}
	return rl
}

func within(path, dir string) bool { return boot.Within(path, dir) }
