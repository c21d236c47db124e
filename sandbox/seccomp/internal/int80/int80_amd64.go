// Package int80 makes a system call through the 32-bit entry (int $0x80)
// from a 64-bit process. It exists for the seccomp package's tests: that
// entry reports AUDIT_ARCH_I386 to seccomp, and its numbers mean other
// calls than the 64-bit ones, which is why the filter must check the
// architecture first.
package int80

// Syscall makes 32-bit system call nr with up to three arguments (ebx,
// ecx, edx) and returns eax: the result, or minus an errno.
func Syscall(nr, a1, a2, a3 uint32) int32
