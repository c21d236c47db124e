// Package seccomp builds and installs the system-call filter of the
// hardened level (L6): a classic-BPF program for seccomp(2) that allows
// the calls ordinary programs make and denies every other one.
//
// It is an allowlist, in the shape of Docker's default profile: a call
// passes only if the table (table_amd64.go) names it, and the table says
// where its list comes from (traces of ordinary workloads on this
// project's machine, then a review). A call the kernel adds after the
// list was written is on no list and is denied, with ENOSYS, until
// someone lists it.
//
// The program is assembled in pure Go with golang.org/x/net/bpf: the
// sandbox needs neither cgo nor libseccomp, and rules can look at
// arguments (clone flags, ioctl commands, socket families, personality
// values), which a plain list of system-call numbers cannot.
//
// The program, in order (each part comes from a function of its own in
// build.go):
//
//  1. architecture: a call from any ABI but the native one (on amd64 the
//     32-bit int $0x80 entry, AUDIT_ARCH_I386) kills the process;
//  2. x32: a native call whose number has __X32_SYSCALL_BIT set fails with
//     EPERM;
//  3. a binary search on the call number, whose leaves decide:
//     - the allowed calls pass;
//     - the refused classes fail with EPERM: io_uring, perf_event_open,
//     userfaultfd, bpf, the keyring, ptrace and the other ways into
//     another process, kexec and kernel modules, the mount family (old
//     and new API) and chroot, unshare and setns, setting the clock,
//     fanotify, the host and domain names and a few privileged
//     leftovers; clone3 fails with ENOSYS, so that libc falls back to
//     clone;
//     - clone: any namespace flag in the low 32 bits of flags fails with
//     EPERM;
//     - ioctl: TIOCSTI and TIOCLINUX (low 32 bits of the command) fail
//     with EPERM;
//     - socket and socketpair: families other than AF_UNIX, AF_INET and
//     AF_INET6 fail with EAFNOSUPPORT;
//     - personality: values other than Docker's allowed set fail with
//     EPERM;
//     - every other number, listed nowhere, fails with ENOSYS, the
//     kernel's answer for a call it does not have, from which libraries
//     fall back.
package seccomp

import (
	"errors"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrUnsupported is returned by Build on an architecture the filter has no
// table for. The filter compares system-call numbers and argument layouts
// of one ABI; rather than guess at another, the hardened level is refused
// (fail closed).
var ErrUnsupported = errors.New("seccomp: no system-call filter for " + runtime.GOARCH)

// ErrNoNewPrivs is returned by Install when the calling thread does not
// have no_new_privs set. Without it a set-user-ID program run later could
// gain privileges the filter's author did not foresee, and inside a user
// namespace the kernel would accept the filter anyway (the caller holds
// CAP_SYS_ADMIN there), so Install checks instead of relying on EACCES.
var ErrNoNewPrivs = errors.New("seccomp: no_new_privs is not set on the calling thread")

// errLength is returned by Install for a program the kernel cannot take.
var errLength = errors.New("seccomp: program is empty or longer than BPF_MAXINSNS")

// Build returns the hardened level's filter for the running architecture,
// ready for Install. It is pure computation (no system calls), returns the
// same program every time, and may run in the parent long before the init
// installs it. On any GOARCH but amd64 it returns ErrUnsupported.
func Build() ([]unix.SockFilter, error) {
	if native == nil {
		return nil, ErrUnsupported
	}
	p, err := program(native)
	if err != nil {
		return nil, err
	}
	return assemble(p)
}

// Install loads prog as a seccomp filter on the calling thread, with
// seccomp(SECCOMP_SET_MODE_FILTER) and no flags: without
// SECCOMP_FILTER_FLAG_TSYNC, the Go runtime's other threads stay
// unfiltered. The caller (the sandbox's init) must have locked its
// goroutine to the thread (runtime.LockOSThread), set no_new_privs on it,
// and exec the program from that same thread soon after; the filter is
// inherited by every child and survives execve.
//
// Install checks no_new_privs with prctl(PR_GET_NO_NEW_PRIVS) and returns
// ErrNoNewPrivs when it is not set. On success it makes exactly those two
// system calls and allocates nothing, so it may run after the init has
// lowered RLIMIT_AS; its errors are preallocated values or a bare
// unix.Errno.
func Install(prog []unix.SockFilter) error {
	if len(prog) == 0 || len(prog) > unix.BPF_MAXINSNS {
		return errLength
	}
	nnp, _, errno := unix.RawSyscall(unix.SYS_PRCTL, unix.PR_GET_NO_NEW_PRIVS, 0, 0)
	if errno != 0 {
		return errno
	}
	if nnp != 1 {
		return ErrNoNewPrivs
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno = unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(&prog[0])
	if errno != 0 {
		return errno
	}
	return nil
}
