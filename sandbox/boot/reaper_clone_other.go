//go:build !amd64 && !arm64

package boot

import (
	"runtime"
	"syscall"
)

// cloneVM is 0 where there is no vforkSyscall in assembly: the child gets
// a copy of the init's memory, and only CLONE_VFORK, so that the parent
// still resumes once it has exec'd.
const cloneVM = 0

// vforkSyscall clones with a copy of the caller's memory (see cloneVM).
//
//go:nosplit
//go:norace
func vforkSyscall(trap, a1, a2, a3 uintptr) (r1, err uintptr) {
	if runtime.GOARCH == "s390x" {
		a1, a2 = a2, a1 // clone(stack, flags, ...)
	}
	r, _, e := syscall.RawSyscall6(trap, a1, a2, a3, 0, 0, 0)
	return r, uintptr(e)
}
