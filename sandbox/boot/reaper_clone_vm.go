//go:build amd64 || arm64

package boot

import "golang.org/x/sys/unix"

// cloneVM is CLONE_VM where the init forks its child vfork-style: sharing
// its memory until the child execs, the parent's thread suspended
// meanwhile (CLONE_VFORK). That spares copying the page tables of a Go
// process (12 MB resident here) and the copy-on-write faults after it:
// about 1.3 ms of CPU and 2 ms of wall time a run, measured. It needs
// vforkSyscall in assembly, as syscall has it, because the child, running
// first on the parent's stack, overwrites the return address of a Go
// system-call wrapper.
const cloneVM = unix.CLONE_VM

// vforkSyscall makes a system call whose child shares the caller's stack
// (clone with CLONE_VM|CLONE_VFORK; the pidfd pointer in a3).
//
//go:noescape
func vforkSyscall(trap, a1, a2, a3 uintptr) (r1, err uintptr)
