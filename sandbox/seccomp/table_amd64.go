package seccomp

import "golang.org/x/sys/unix"

// x32SyscallBit is __X32_SYSCALL_BIT (arch/x86/include/uapi/asm/unistd.h).
const x32SyscallBit = 0x40000000

// native is the table of the running architecture.
//
// Where the allowlist comes from. The compatibility workloads of issue 24
// were traced on this project's machine (Debian 12, glibc 2.36, Python
// 3.11, gcc 12, kernel 6.18) with `strace -f -qq`, each run as a
// sandboxed program runs: as uid 65534 (setpriv --reuid 65534 --regid
// 65534 --clear-groups), and again as root of a fresh user, PID, network,
// IPC and UTS namespace mapped to 65534 (unshare -Ur), the sandbox's own
// identity, where tar and cp act as root and chown what they extract.
// The workloads: /usr/bin/python3 using json, csv, sqlite3, hashlib,
// zipfile, tarfile, tempfile, threading, multiprocessing (fork, spawn and
// forkserver), concurrent.futures, subprocess, asyncio (subprocesses,
// Unix and TCP servers), ctypes loading libc, signal, time, locale,
// os.scandir, file and socket calls, gzip/bz2/lzma; sh (dash) pipelines
// with sort, uniq, grep, sed, awk (mawk), tr, tar, gzip, find, xargs,
// dd, md5sum and a bash loop; gcc compiling and linking a C file with
// threads and libm, then running it; cat /etc/os-release; writing and
// reading 50 MB. traced below is the union of the calls seen (119 names),
// less those with argument rules (clone, ioctl, socket, socketpair) and
// clone3, which is refused. The raw traces are not kept.
//
// reviewed holds what the traces missed but a well-behaved program
// plausibly needs, found by reading Docker's default profile (an
// allowlist) call by call and by tracing git, make, perl, node and a Go
// program the same way (the sandbox's init is a Go program until it
// execs). Docker's list was not copied: the dangerous classes it allows
// (clock_adjtime and adjtimex, fanotify_mark, name_to_handle_at, io_uring,
// ptrace and process_vm_* on newer kernels) are refused here, and calls
// with no ordinary use are left out and so fail with ENOSYS:
// remap_file_pages, modify_ldt, set_thread_area and get_thread_area,
// get_robust_list, memfd_secret, cachestat, process_mrelease, the
// obsolete epoll_*_old; the NUMA calls (mbind, get_mempolicy, ...), from
// which libnuma falls back on ENOSYS; statmount and listmount, from which
// libmount falls back to /proc; and calls newer than glibc 2.36 uses for
// operations the list already has another way to make (setxattrat and
// its kin, file_getattr and file_setattr, lsm_*, listns).
//
// A call added to the kernel after this list was written is on neither
// list, so it fails with ENOSYS until someone lists it here.
var native = &table{
	audit:   unix.AUDIT_ARCH_X86_64,
	x32Bit:  x32SyscallBit,
	lowWord: 0, // little-endian

	traced: []uint32{
		unix.SYS_ACCEPT4, unix.SYS_ACCESS, unix.SYS_ALARM, unix.SYS_ARCH_PRCTL,
		unix.SYS_BIND, unix.SYS_BRK, unix.SYS_CHDIR, unix.SYS_CHMOD, unix.SYS_CHOWN,
		unix.SYS_CLOCK_GETTIME, unix.SYS_CLOCK_NANOSLEEP, unix.SYS_CLOSE,
		unix.SYS_CLOSE_RANGE, unix.SYS_CONNECT, unix.SYS_COPY_FILE_RANGE, unix.SYS_CREAT,
		unix.SYS_DUP, unix.SYS_DUP2, unix.SYS_EPOLL_CREATE1, unix.SYS_EPOLL_CTL,
		unix.SYS_EPOLL_WAIT, unix.SYS_EXECVE, unix.SYS_EXIT, unix.SYS_EXIT_GROUP,
		unix.SYS_FACCESSAT2, unix.SYS_FADVISE64, unix.SYS_FCHDIR, unix.SYS_FCHMOD,
		unix.SYS_FCHOWN, unix.SYS_FCHOWNAT, unix.SYS_FCNTL, unix.SYS_FDATASYNC,
		unix.SYS_FLOCK, unix.SYS_FSTATFS, unix.SYS_FSYNC, unix.SYS_FTRUNCATE,
		unix.SYS_FUTEX, unix.SYS_GETCWD, unix.SYS_GETDENTS64, unix.SYS_GETEGID,
		unix.SYS_GETEUID, unix.SYS_GETGID, unix.SYS_GETGROUPS, unix.SYS_GETITIMER,
		unix.SYS_GETPEERNAME, unix.SYS_GETPGRP, unix.SYS_GETPID, unix.SYS_GETPPID,
		unix.SYS_GETPRIORITY, unix.SYS_GETRANDOM, unix.SYS_GETRUSAGE,
		unix.SYS_GETSOCKNAME, unix.SYS_GETSOCKOPT, unix.SYS_GETTID, unix.SYS_GETUID,
		unix.SYS_GETXATTR, unix.SYS_KILL, unix.SYS_LGETXATTR, unix.SYS_LINK,
		unix.SYS_LISTEN, unix.SYS_LISTXATTR, unix.SYS_LSEEK, unix.SYS_MADVISE,
		unix.SYS_MKDIR, unix.SYS_MKDIRAT, unix.SYS_MMAP, unix.SYS_MPROTECT,
		unix.SYS_MREMAP, unix.SYS_MSYNC, unix.SYS_MUNMAP, unix.SYS_NEWFSTATAT,
		unix.SYS_OPENAT, unix.SYS_PIPE2, unix.SYS_POLL, unix.SYS_PREAD64,
		unix.SYS_PRLIMIT64, unix.SYS_PSELECT6, unix.SYS_PWRITE64, unix.SYS_READ,
		unix.SYS_READLINK, unix.SYS_RECVFROM, unix.SYS_RECVMSG, unix.SYS_RENAME,
		unix.SYS_RMDIR, unix.SYS_RSEQ, unix.SYS_RT_SIGACTION, unix.SYS_RT_SIGPROCMASK,
		unix.SYS_RT_SIGRETURN, unix.SYS_RT_SIGTIMEDWAIT, unix.SYS_SCHED_GETAFFINITY,
		unix.SYS_SENDFILE, unix.SYS_SENDMSG, unix.SYS_SENDTO, unix.SYS_SET_ROBUST_LIST,
		unix.SYS_SET_TID_ADDRESS, unix.SYS_SETITIMER, unix.SYS_SETPRIORITY,
		unix.SYS_SETSOCKOPT, unix.SYS_SIGALTSTACK, unix.SYS_STATFS, unix.SYS_STATX,
		unix.SYS_SYMLINK, unix.SYS_SYSINFO, unix.SYS_TGKILL, unix.SYS_TIMES,
		unix.SYS_TRUNCATE, unix.SYS_UMASK, unix.SYS_UNAME, unix.SYS_UNLINK,
		unix.SYS_UNLINKAT, unix.SYS_UTIMENSAT, unix.SYS_VFORK, unix.SYS_WAIT4,
		unix.SYS_WRITE,
	},

	reviewed: []uint32{
		// The kernel restarts an interrupted sleep through it.
		unix.SYS_RESTART_SYSCALL,
		// Files: the other forms of what the traces did, and what
		// databases, editors and build tools do besides.
		unix.SYS_OPEN, unix.SYS_OPENAT2, unix.SYS_PIPE, unix.SYS_READV, unix.SYS_WRITEV,
		unix.SYS_PREADV, unix.SYS_PREADV2, unix.SYS_PWRITEV, unix.SYS_PWRITEV2,
		unix.SYS_DUP3, unix.SYS_FALLOCATE, unix.SYS_READAHEAD, unix.SYS_SPLICE,
		unix.SYS_TEE, unix.SYS_VMSPLICE, unix.SYS_SYNC_FILE_RANGE, unix.SYS_STAT, unix.SYS_FSTAT, unix.SYS_LSTAT,
		unix.SYS_FACCESSAT, unix.SYS_READLINKAT, unix.SYS_GETDENTS,
		unix.SYS_FCHMODAT, unix.SYS_FCHMODAT2, unix.SYS_LCHOWN, unix.SYS_UTIME,
		unix.SYS_UTIMES, unix.SYS_FUTIMESAT, unix.SYS_RENAMEAT, unix.SYS_RENAMEAT2,
		unix.SYS_LINKAT, unix.SYS_SYMLINKAT, unix.SYS_MKNOD, unix.SYS_MKNODAT,
		unix.SYS_EXECVEAT,
		unix.SYS_FGETXATTR, unix.SYS_LLISTXATTR, unix.SYS_FLISTXATTR,
		unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR,
		unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR,
		// Memory.
		unix.SYS_MINCORE, unix.SYS_MLOCK, unix.SYS_MLOCK2, unix.SYS_MUNLOCK,
		unix.SYS_MLOCKALL, unix.SYS_MUNLOCKALL, unix.SYS_MEMBARRIER,
		unix.SYS_MEMFD_CREATE, unix.SYS_PKEY_ALLOC, unix.SYS_PKEY_FREE,
		unix.SYS_PKEY_MPROTECT, unix.SYS_MAP_SHADOW_STACK, unix.SYS_MSEAL,
		// Processes, threads and identity (the kernel refuses what the
		// program's capabilities do not cover).
		unix.SYS_FORK, unix.SYS_WAITID, unix.SYS_TKILL, unix.SYS_GETPGID,
		unix.SYS_SETPGID, unix.SYS_GETSID, unix.SYS_SETSID, unix.SYS_PRCTL,
		unix.SYS_SECCOMP, unix.SYS_CAPGET, unix.SYS_CAPSET,
		unix.SYS_GETRESUID, unix.SYS_GETRESGID, unix.SYS_SETUID, unix.SYS_SETGID,
		unix.SYS_SETREUID, unix.SYS_SETREGID, unix.SYS_SETRESUID,
		unix.SYS_SETRESGID, unix.SYS_SETFSUID, unix.SYS_SETFSGID,
		unix.SYS_SETGROUPS, unix.SYS_GETRLIMIT, unix.SYS_SETRLIMIT,
		unix.SYS_GETCPU, unix.SYS_SCHED_YIELD, unix.SYS_SCHED_SETAFFINITY,
		unix.SYS_SCHED_GETPARAM, unix.SYS_SCHED_SETPARAM,
		unix.SYS_SCHED_GETSCHEDULER, unix.SYS_SCHED_SETSCHEDULER,
		unix.SYS_SCHED_GET_PRIORITY_MAX, unix.SYS_SCHED_GET_PRIORITY_MIN,
		unix.SYS_SCHED_RR_GET_INTERVAL, unix.SYS_SCHED_GETATTR,
		unix.SYS_SCHED_SETATTR, unix.SYS_IOPRIO_GET, unix.SYS_IOPRIO_SET,
		unix.SYS_PIDFD_OPEN, unix.SYS_PIDFD_SEND_SIGNAL,
		// A program that sandboxes itself further.
		unix.SYS_LANDLOCK_CREATE_RULESET, unix.SYS_LANDLOCK_ADD_RULE,
		unix.SYS_LANDLOCK_RESTRICT_SELF,
		// Signals.
		unix.SYS_RT_SIGPENDING, unix.SYS_RT_SIGSUSPEND, unix.SYS_RT_SIGQUEUEINFO,
		unix.SYS_RT_TGSIGQUEUEINFO, unix.SYS_SIGNALFD, unix.SYS_SIGNALFD4,
		unix.SYS_PAUSE,
		// Time, read only (setting it is refused below), and timers.
		unix.SYS_CLOCK_GETRES, unix.SYS_GETTIMEOFDAY, unix.SYS_TIME,
		unix.SYS_NANOSLEEP, unix.SYS_TIMER_CREATE, unix.SYS_TIMER_SETTIME,
		unix.SYS_TIMER_GETTIME, unix.SYS_TIMER_GETOVERRUN, unix.SYS_TIMER_DELETE,
		unix.SYS_TIMERFD_CREATE, unix.SYS_TIMERFD_SETTIME, unix.SYS_TIMERFD_GETTIME,
		// Waiting: the other forms of poll, epoll and futex.
		unix.SYS_SELECT, unix.SYS_PPOLL, unix.SYS_EPOLL_CREATE,
		unix.SYS_EPOLL_PWAIT, unix.SYS_EPOLL_PWAIT2, unix.SYS_EVENTFD,
		unix.SYS_EVENTFD2, unix.SYS_FUTEX_WAITV, unix.SYS_FUTEX_WAKE,
		unix.SYS_FUTEX_WAIT, unix.SYS_FUTEX_REQUEUE,
		// Sockets (socket and socketpair have their family rule).
		unix.SYS_ACCEPT, unix.SYS_SHUTDOWN, unix.SYS_SENDMMSG, unix.SYS_RECVMMSG,
		// System V and POSIX IPC: the run has an IPC namespace of its own.
		unix.SYS_SHMGET, unix.SYS_SHMAT, unix.SYS_SHMDT, unix.SYS_SHMCTL,
		unix.SYS_SEMGET, unix.SYS_SEMOP, unix.SYS_SEMTIMEDOP, unix.SYS_SEMCTL,
		unix.SYS_MSGGET, unix.SYS_MSGSND, unix.SYS_MSGRCV, unix.SYS_MSGCTL,
		unix.SYS_MQ_OPEN, unix.SYS_MQ_UNLINK, unix.SYS_MQ_TIMEDSEND,
		unix.SYS_MQ_TIMEDRECEIVE, unix.SYS_MQ_NOTIFY, unix.SYS_MQ_GETSETATTR,
	},

	// The old asynchronous I/O (libaio): its events come from one
	// count for the whole machine, fs.aio-max-nr, which a program could
	// take for itself. ENOSYS, as on a kernel built without CONFIG_AIO,
	// from which libaio's users fall back to plain reads and writes.
	// io_uring is refused below.
	aio: []uint32{
		unix.SYS_IO_SETUP, unix.SYS_IO_DESTROY, unix.SYS_IO_SUBMIT,
		unix.SYS_IO_CANCEL, unix.SYS_IO_GETEVENTS, unix.SYS_IO_PGETEVENTS,
	},

	// inotify: the root's system directories are the host's own inodes,
	// so a watch there sees the host's processes open and exec files,
	// and every instance counts against one per-user limit that all
	// sessions share (fs.inotify.max_user_instances). Landlock does not
	// govern watches, and the filter cannot read a path. ENOSYS, as where
	// the kernel lacks inotify: GNU tail -f and most watchers fall back
	// to polling.
	watch: []uint32{
		unix.SYS_INOTIFY_INIT, unix.SYS_INOTIFY_INIT1, unix.SYS_INOTIFY_ADD_WATCH,
		unix.SYS_INOTIFY_RM_WATCH,
	},

	// sync and syncfs write back every process's dirty data on the
	// filesystems they reach, the host's disks among them (the root's
	// system directories are the host's, bound read-only). They are
	// answered 0 without being made: the program's own files are in the
	// session's tmpfs, which has nothing to write back, and fsync,
	// fdatasync and sync_file_range, which touch only its own file,
	// stay allowed.
	writeback: []uint32{unix.SYS_SYNC, unix.SYS_SYNCFS},

	// Refused classes. EPERM: each call exists on every kernel the
	// sandbox supports and either a program without the host's
	// capabilities would get EPERM from the kernel anyway or the sandbox
	// refuses the operation by policy; no library falls back from them,
	// so a distinct "not permitted" says what happened.
	refused: []denial{
		// Kernel attack surface a sandboxed program has no use for.
		{unix.SYS_IO_URING_SETUP, unix.EPERM},
		{unix.SYS_IO_URING_ENTER, unix.EPERM},
		{unix.SYS_IO_URING_REGISTER, unix.EPERM},
		{unix.SYS_PERF_EVENT_OPEN, unix.EPERM},
		{unix.SYS_USERFAULTFD, unix.EPERM},
		{unix.SYS_BPF, unix.EPERM},
		{unix.SYS_LOOKUP_DCOOKIE, unix.EPERM},
		// The keyring is not namespaced.
		{unix.SYS_KEYCTL, unix.EPERM},
		{unix.SYS_ADD_KEY, unix.EPERM},
		{unix.SYS_REQUEST_KEY, unix.EPERM},
		// Reading, writing and comparing other processes.
		{unix.SYS_PTRACE, unix.EPERM},
		{unix.SYS_PROCESS_VM_READV, unix.EPERM},
		{unix.SYS_PROCESS_VM_WRITEV, unix.EPERM},
		{unix.SYS_PIDFD_GETFD, unix.EPERM},
		{unix.SYS_PROCESS_MADVISE, unix.EPERM},
		{unix.SYS_KCMP, unix.EPERM},
		// Replacing the kernel or loading code into it.
		{unix.SYS_KEXEC_LOAD, unix.EPERM},
		{unix.SYS_KEXEC_FILE_LOAD, unix.EPERM},
		{unix.SYS_INIT_MODULE, unix.EPERM},
		{unix.SYS_FINIT_MODULE, unix.EPERM},
		{unix.SYS_DELETE_MODULE, unix.EPERM},
		// The mount family, old and new API, and the other ways to
		// change what the filesystem looks like: the sandbox's mounts
		// are final once the program runs.
		{unix.SYS_MOUNT, unix.EPERM},
		{unix.SYS_UMOUNT2, unix.EPERM},
		{unix.SYS_PIVOT_ROOT, unix.EPERM},
		{unix.SYS_CHROOT, unix.EPERM},
		{unix.SYS_FSOPEN, unix.EPERM},
		{unix.SYS_FSCONFIG, unix.EPERM},
		{unix.SYS_FSMOUNT, unix.EPERM},
		{unix.SYS_FSPICK, unix.EPERM},
		{unix.SYS_MOVE_MOUNT, unix.EPERM},
		{unix.SYS_OPEN_TREE, unix.EPERM},
		{unix.SYS_OPEN_TREE_ATTR, unix.EPERM},
		{unix.SYS_MOUNT_SETATTR, unix.EPERM},
		// New namespaces and joining others; clone's flags are checked
		// by cloneRule.
		{unix.SYS_UNSHARE, unix.EPERM},
		{unix.SYS_SETNS, unix.EPERM},
		// clone3's flags sit behind a pointer the filter cannot read.
		// ENOSYS, as on a kernel older than 5.3, makes glibc (2.34+)
		// fall back to clone, whose flags cloneRule checks.
		{unix.SYS_CLONE3, unix.ENOSYS},
		// The clock is the host's: no time namespace covers the real
		// time, and reading it needs none of these.
		{unix.SYS_CLOCK_SETTIME, unix.EPERM},
		{unix.SYS_CLOCK_ADJTIME, unix.EPERM},
		{unix.SYS_ADJTIMEX, unix.EPERM},
		{unix.SYS_SETTIMEOFDAY, unix.EPERM},
		// Watching the filesystem's events beyond the program's own
		// files (inotify is allowed).
		{unix.SYS_FANOTIFY_INIT, unix.EPERM},
		{unix.SYS_FANOTIFY_MARK, unix.EPERM},
		// Names the sandbox gives: its UTS namespace is its own, and
		// the program has no business renaming it.
		{unix.SYS_SETHOSTNAME, unix.EPERM},
		{unix.SYS_SETDOMAINNAME, unix.EPERM},
		// Privileged leftovers: the kernel refuses most of them to a
		// program without host capabilities already; the filter keeps
		// their code out of reach all the same.
		{unix.SYS_SWAPON, unix.EPERM},
		{unix.SYS_SWAPOFF, unix.EPERM},
		{unix.SYS_REBOOT, unix.EPERM},
		{unix.SYS_ACCT, unix.EPERM},
		{unix.SYS_QUOTACTL, unix.EPERM},
		{unix.SYS_QUOTACTL_FD, unix.EPERM},
		{unix.SYS_OPEN_BY_HANDLE_AT, unix.EPERM},
		{unix.SYS_NAME_TO_HANDLE_AT, unix.EPERM},
		{unix.SYS_SYSLOG, unix.EPERM},
		{unix.SYS_USELIB, unix.EPERM},
		{unix.SYS_VHANGUP, unix.EPERM},
		{unix.SYS_IOPL, unix.EPERM},
		{unix.SYS_IOPERM, unix.EPERM},
	},

	clone:       unix.SYS_CLONE,
	ioctl:       unix.SYS_IOCTL,
	socket:      unix.SYS_SOCKET,
	socketpair:  unix.SYS_SOCKETPAIR,
	personality: unix.SYS_PERSONALITY,
}
