package mutants

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"sandboxlab/verdict"
)

// ID names one planted defect. The ids are stable: predictions.yaml and
// every report use them.
type ID string

// The planted defects: the course's 29, then the hardening suite's. Each is consulted at exactly one kind of site,
// named by Site in the registry.
const (
	FailOpen        ID = "fail_open"
	TimeoutHidden   ID = "timeout_hidden"
	ExitCodeLost    ID = "exit_code_lost"
	TraversalOK     ID = "traversal_ok"
	AbsPathOK       ID = "abs_path_ok"
	PathGuardsOff   ID = "path_guards_off"
	LinksFollowed   ID = "links_followed"
	SpecialFilesOK  ID = "special_files_ok"
	NoWallLimit     ID = "no_wall_limit"
	CPUSoftOnly     ID = "cpu_soft_only"
	NoCPULimit      ID = "no_cpu_limit"
	NoMemoryLimit   ID = "no_memory_limit"
	OOMFlagLost     ID = "oom_flag_lost"
	NoFsizeLimit    ID = "no_fsize_limit"
	NoNofileLimit   ID = "no_nofile_limit"
	HeadOnlyOutput  ID = "head_only_output"
	UnboundedOutput ID = "unbounded_output"
	NprocRlimitOnly ID = "nproc_rlimit_only"
	NoSweep         ID = "no_sweep"
	KillLeaderOnly  ID = "kill_leader_only"
	EnvInherited    ID = "env_inherited"
	SharedWorkdir   ID = "shared_workdir"
	WorkdirKept     ID = "workdir_kept"
	FreshDirPerRun  ID = "fresh_dir_per_run"
	NoPIDNS         ID = "no_pid_ns"
	NoNetNS         ID = "no_net_ns"
	NoMountHide     ID = "no_mount_hide"
	CapsKept        ID = "caps_kept"
	QuotaIgnored    ID = "quota_ignored"

	// Beyond the course: L5 keeps its promise.
	RunShared          ID = "run_shared"
	IPCShared          ID = "ipc_shared"
	SessionParentBound ID = "session_parent_bound"
	KeyringInherited   ID = "keyring_inherited"
	TraceStopEnded     ID = "trace_stop_ended"

	// Beyond the course: L6, hardened.
	NoSeccomp             ID = "no_seccomp"
	SeccompArchUnchecked  ID = "seccomp_arch_unchecked"
	SeccompCloneUnchecked ID = "seccomp_clone_unchecked"
	SeccompDefaultAllow   ID = "seccomp_default_allow"
	LandlockWideWrite     ID = "landlock_wide_write"
	PidsMonitorOnly       ID = "pids_monitor_only"
	InitNoDeadline        ID = "init_no_deadline"
	InitSignalsOpen       ID = "init_signals_open"
	OOMFromText           ID = "oom_from_text"
	NoAllowlistRoot       ID = "no_allowlist_root"
	RootExposesVar        ID = "root_exposes_var"
	SessionStoreUnbounded ID = "session_store_unbounded"

	// Beyond the course: L6 shares nothing with the host.
	HostnameShared   ID = "hostname_shared"
	ProcIdentityOpen ID = "proc_identity_open"
	CgroupNSShared   ID = "cgroup_ns_shared"
	SessionHostPath  ID = "session_host_path"
	UptimeShared     ID = "uptime_shared"
	AIOAllowed       ID = "aio_allowed"
	InotifyAllowed   ID = "inotify_allowed"
	SyncAllowed      ID = "sync_allowed"

	// Beyond the course: network by allowlist, through the egress proxy.
	EgressSuffixMatch          ID = "egress_suffix_match"
	EgressPortIgnored          ID = "egress_port_ignored"
	EgressDenyIgnored          ID = "egress_deny_ignored"
	EgressCredentialEverywhere ID = "egress_credential_everywhere"
	EgressIPByAddress          ID = "egress_ip_by_address"
	EgressDecideOnce           ID = "egress_decide_once"
	EgressLandlockClosed       ID = "egress_landlock_closed"
	EgressHostNetwork          ID = "egress_host_network"
	EgressDenyByName           ID = "egress_deny_by_name"
)

// Defect describes one planted defect.
type Defect struct {
	ID ID
	// Summary says in one line what the defective sandbox does wrong.
	Summary string
	// Site is the source file (relative to the module root) holding the
	// planted site; the site itself is the expression mutants.On(ID) there.
	Site string
	// Suite is the suite the defect belongs to: its run is judged by that
	// suite's checks and attacks only.
	Suite verdict.Suite
}

// All lists every planted defect in a stable order: the course's, then
// the hardening suite's, each with its suite.
var All = append(inSuite(verdict.Course, course), hardening...)

// hardening lists the defects beyond the course, each naming its suite:
//
//	{ID: NoSeccomp, Summary: "...", Site: "sandbox/boot/init.go", Suite: verdict.Hardening},
var hardening = []Defect{
	{RunShared, "/run is left shared with the host (as for its resolver configuration): its sockets and writable directories are the host's", "sandbox/run.go", verdict.Hardening},
	{IPCShared, "no IPC namespace: System V objects and POSIX message queues the program makes stay on the host", "sandbox/run.go", verdict.Hardening},
	{SessionParentBound, "the directory holding the sessions is bound back instead of the session's own, so sibling sessions are in sight", "sandbox/boot/private.go", verdict.Hardening},
	{KeyringInherited, "the program keeps the harness's session keyring and can read its keys", "sandbox/boot/init.go", verdict.Hardening},
	{TraceStopEnded, "the supervisor takes a traced stop of the run's first process for its end: a program that makes it its tracer and stops itself is reported ended while it and its children go on", "sandbox/run.go", verdict.Hardening},
	{NoSeccomp, "the system-call filter is built but never installed", "sandbox/boot/init.go", verdict.Hardening},
	{SeccompArchUnchecked, "the filter does not check the architecture, so the 32-bit entry point reaches calls it denies", "sandbox/seccomp/build.go", verdict.Hardening},
	{SeccompCloneUnchecked, "the filter lets clone through whatever its flags, new namespaces included", "sandbox/seccomp/build.go", verdict.Hardening},
	{SeccompDefaultAllow, "the filter allows every call its lists do not name, as the denylist it replaced did: only the refused calls and the argument rules still apply", "sandbox/seccomp/build.go", verdict.Hardening},
	{LandlockWideWrite, "Landlock grants write beneath / instead of the session and its private directories", "sandbox/hardened.go", verdict.Hardening},
	{PidsMonitorOnly, "the run's control group has no pids.max: the process cap is the polling monitor only", "sandbox/hardened.go", verdict.Hardening},
	{InitNoDeadline, "the L6 init waits for its program without the run's deadline: only the supervisor's backstop, 250 ms later, ends a runaway", "sandbox/boot/reaper.go", verdict.Hardening},
	{InitSignalsOpen, "the L6 init keeps the signal handlers Go installed: a fault signal the program queues to PID 1 with a forged si_code crashes it, and SIGTERM before the init catches signals ends it", "sandbox/boot/reaper.go", verdict.Hardening},
	{OOMFromText, "the OOM flag and the memory stop come from the error text, not the kernel's count of OOM kills", "sandbox/run.go", verdict.Hardening},
	{NoAllowlistRoot, "L6 builds no root of its own: the program sees the host's tree as at L5, its chosen paths hidden and scratch directories private", "sandbox/rootfs.go", verdict.Hardening},
	{RootExposesVar, "the allowlist root exposes /var as well, read-only, as for programs that read /var/lib: the host's sockets and files there are in reach", "sandbox/rootfs.go", verdict.Hardening},
	{SessionStoreUnbounded, "the session's filesystem is mounted without its size and inode limits: a run can write past the quota", "sandbox/disk.go", verdict.Hardening},
	{HostnameShared, "the L6 init leaves the host's name in the run's own UTS namespace", "sandbox/boot/init.go", verdict.Hardening},
	{ProcIdentityOpen, "the L6 init leaves /proc's boot id, kernel command line and lock list unmasked: they are the host's", "sandbox/boot/init.go", verdict.Hardening},
	{CgroupNSShared, "the L6 run has no cgroup namespace of its own: /proc/self/cgroup names its group as the host does, with the harness's pid and start", "sandbox/boot/init.go", verdict.Hardening},
	{UptimeShared, "the L6 init gives the program no time namespace: /proc/uptime and /proc/stat's boot time are the host's", "sandbox/boot/init.go", verdict.Hardening},
	{SessionHostPath, "the L6 root holds the session at its host path, not at /session: the program's working directory, HOME, TMPDIR and mount table name it", "sandbox/rootfs.go", verdict.Hardening},
	{AIOAllowed, "the filter lets the old asynchronous I/O calls through: io_setup takes events from the machine-wide fs.aio-max-nr", "sandbox/seccomp/build.go", verdict.Hardening},
	{InotifyAllowed, "the filter lets inotify through: a watch on the root's system directories, the host's own inodes, sees the host's processes use them", "sandbox/seccomp/build.go", verdict.Hardening},
	{SyncAllowed, "the filter lets sync and syncfs through: they write back the dirty data of every process on the host's filesystems", "sandbox/seccomp/build.go", verdict.Hardening},
	{EgressSuffixMatch, "the egress proxy matches a rule's name as a string suffix, so evilexample.com passes for *.example.com", "sandbox/egress/rules.go", verdict.Hardening},
	{EgressPortIgnored, "the egress proxy ignores a rule's port: an allowed host is reachable on every port", "sandbox/egress/rules.go", verdict.Hardening},
	{EgressDenyIgnored, "the egress proxy never reads the deny list", "sandbox/egress/rules.go", verdict.Hardening},
	{EgressCredentialEverywhere, "the egress proxy adds the credential to requests for every destination, not only its own", "sandbox/egress/proxy/proxy.go", verdict.Hardening},
	{EgressIPByAddress, "the egress proxy lets a request for an IP address through when an allowed name resolves to it, ignoring the name", "sandbox/egress/proxy/proxy.go", verdict.Hardening},
	{EgressDecideOnce, "the egress proxy decides a keep-alive connection at its first request and lets the later ones through", "sandbox/egress/proxy/proxy.go", verdict.Hardening},
	{EgressLandlockClosed, "at L6 Landlock's TCP rule leaves the proxy's port out, so an allowed destination cannot be reached at all", "sandbox/run.go", verdict.Hardening},
	{EgressHostNetwork, "with an allowlist the run keeps the host's network and the proxy listens on the host's loopback: the program is trusted to use HTTP_PROXY", "sandbox/run.go", verdict.Hardening},
	{EgressDenyByName, "the egress proxy reads deny rules against the name asked for only: an allowed name that resolves to a denied address reaches it", "sandbox/egress/proxy/proxy.go", verdict.Hardening},
}

// needs maps a defect to what of the host's kernel it needs to show
// anything at all (see verdict.Feature); where the host lacks it the
// harness reports the defect untestable instead of running it.
var needs = map[ID]verdict.Feature{
	// Without a 32-bit entry, int $0x80 faults before the filter is asked:
	// the architecture check guards nothing there.
	SeccompArchUnchecked: verdict.CompatEntry,
}

// Needs returns what of the host the defect needs ("" for nothing).
func (d Defect) Needs() verdict.Feature { return needs[d.ID] }

// layers maps a defect whose site only weakens one layer of the policy
// (a name of sandbox.Layers) to that layer. Their sites are in the set-up
// that every run passes, so coverage selects every probe for them; a
// probe that declares the layers its verdict can depend on (a check's
// Touches, an attack's) runs under such a defect only when it names the
// defect's layer. A defect missing here runs wherever its site is
// reached. harness's TestDefectLayersAreLayers keeps the names true, and
// TestMutateSelectionIsSound keeps the narrowing sound on one of them.
var layers = map[ID]string{
	TimeoutHidden:   "wall_clock",
	NoWallLimit:     "wall_clock",
	CPUSoftOnly:     "cpu_limit",
	NoCPULimit:      "cpu_limit",
	NoMemoryLimit:   "address_space",
	NoFsizeLimit:    "file_size",
	NoNofileLimit:   "open_files",
	NprocRlimitOnly: "process_monitor",
	KillLeaderOnly:  "tree_kill",
	EnvInherited:    "scrub_env",
	SharedWorkdir:   "private_workdir",
	WorkdirKept:     "private_workdir",
	FreshDirPerRun:  "private_workdir",
	NoPIDNS:         "pid_namespace",
	NoNetNS:         "network_namespace",
	NoMountHide:     "hidden_paths",
	CapsKept:        "drop_capabilities",

	RunShared:             "private_scratch",
	IPCShared:             "own_ipc",
	KeyringInherited:      "fresh_keyring",
	NoSeccomp:             "syscall_filter",
	SeccompArchUnchecked:  "syscall_filter",
	SeccompCloneUnchecked: "syscall_filter",
	SeccompDefaultAllow:   "syscall_filter",
	AIOAllowed:            "syscall_filter",
	InotifyAllowed:        "syscall_filter",
	SyncAllowed:           "syscall_filter",
	LandlockWideWrite:     "landlock",
	PidsMonitorOnly:       "cgroup_pids",
	InitNoDeadline:        "reaper",
	InitSignalsOpen:       "reaper",
	OOMFromText:           "cgroup_memory",
	NoAllowlistRoot:       "allowlist_root",
	RootExposesVar:        "allowlist_root",
	SessionStoreUnbounded: "session_store",
	HostnameShared:        "own_identity",
	ProcIdentityOpen:      "own_identity",
	CgroupNSShared:        "own_identity",
	SessionHostPath:       "own_identity",
	UptimeShared:          "own_identity",
}

// Layer returns the one layer of the policy the defect weakens, or ""
// when it is not one layer's (see layers).
func (d Defect) Layer() string { return layers[d.ID] }

// planted is a defect without its suite: the list it is in gives it.
type planted struct {
	ID      ID
	Summary string
	Site    string
}

// inSuite gives each defect of list the suite s.
func inSuite(s verdict.Suite, list []planted) []Defect {
	out := make([]Defect, len(list))
	for i, p := range list {
		out[i] = Defect{ID: p.ID, Summary: p.Summary, Site: p.Site, Suite: s}
	}
	return out
}

// course lists the course's 29 planted defects, in the course's order.
var course = []planted{
	{FailOpen, "when a namespace cannot be created, the program runs without it instead of being refused", "sandbox/run.go"},
	{TimeoutHidden, "a run stopped at the wall-clock limit is reported with TimedOut false", "sandbox/run.go"},
	{ExitCodeLost, "the program's exit status is reported as 0", "sandbox/run.go"},
	{TraversalOK, "the file API's guard against '..' components that leave the directory is gone", "sandbox/files.go"},
	{AbsPathOK, "the file API's guard against absolute names is gone", "sandbox/files.go"},
	{PathGuardsOff, "all three file-name guards are gone: '..', absolute names, and the kernel's beneath/no-symlink resolution", "sandbox/files.go"},
	{LinksFollowed, "the file API opens the joined path with a plain open, following links the program made", "sandbox/files.go"},
	{SpecialFilesOK, "the file API reads FIFOs, sockets and devices, not only regular files", "sandbox/files.go"},
	{NoWallLimit, "the wall-clock timer is never armed; only the 4 s watchdog bounds a run", "sandbox/supervise.go"},
	{CPUSoftOnly, "only the soft CPU limit is set, so PID 1 of a PID namespace ignores it", "sandbox/policy.go"},
	{NoCPULimit, "RLIMIT_CPU is not set", "sandbox/policy.go"},
	{NoMemoryLimit, "RLIMIT_AS is not set", "sandbox/policy.go"},
	{OOMFlagLost, "the out-of-memory heuristic is not applied, so the result never says memory", "sandbox/run.go"},
	{NoFsizeLimit, "RLIMIT_FSIZE is not set", "sandbox/policy.go"},
	{NoNofileLimit, "RLIMIT_NOFILE is not set", "sandbox/policy.go"},
	{HeadOnlyOutput, "output past the cap keeps only the beginning, losing the end that names the error", "sandbox/output.go"},
	{UnboundedOutput, "the whole stream is held in memory and cut only at the end", "sandbox/output.go"},
	{NprocRlimitOnly, "the process cap is RLIMIT_NPROC instead of the /proc monitor", "sandbox/run.go"},
	{NoSweep, "leftover processes of the run's session are not killed after a normal end", "sandbox/run.go"},
	{KillLeaderOnly, "the timeout kills only the first process, not its children and session", "sandbox/supervise.go"},
	{EnvInherited, "the program inherits the caller's whole environment", "sandbox/run.go"},
	{SharedWorkdir, "the program runs in the application's directory instead of the session's", "sandbox/run.go"},
	{WorkdirKept, "Close leaves the session directory on disk", "sandbox/session.go"},
	{FreshDirPerRun, "every run gets a new directory, so nothing survives between runs", "sandbox/session.go"},
	{NoPIDNS, "no PID namespace: the program sees the host's processes and its daemons outlive it", "sandbox/run.go"},
	{NoNetNS, "no network namespace: the program reaches the host's loopback and beyond", "sandbox/run.go"},
	{NoMountHide, "the chosen paths are not hidden", "sandbox/boot/init.go"},
	{CapsKept, "the capability bounding set and capabilities are kept", "sandbox/boot/init.go"},
	{QuotaIgnored, "the session's disk quota is never checked", "sandbox/session.go"},
}

// ErrUnknown is returned for an id that names no defect.
var ErrUnknown = errors.New("unknown defect")

// ErrNotCompiled is returned by Enable in a build made with the nomutants
// tag: that build has no planted sites to switch on.
var ErrNotCompiled = errors.New("defects are not compiled into this build (built with -tags nomutants)")

// Lookup returns the defect with the given id.
func Lookup(id string) (Defect, error) {
	for _, d := range All {
		if string(d.ID) == id {
			return d, nil
		}
	}
	return Defect{}, fmt.Errorf("%w %q (known: %s)", ErrUnknown, id, strings.Join(IDs(), ", "))
}

// IDs returns every defect id, sorted.
func IDs() []string {
	ids := make([]string, len(All))
	for i, d := range All {
		ids[i] = string(d.ID)
	}
	sort.Strings(ids)
	return ids
}
