package seccomp

import "golang.org/x/sys/unix"

// x32SyscallBit is __X32_SYSCALL_BIT (arch/x86/include/uapi/asm/unistd.h).
const x32SyscallBit = 0x40000000

// native is the table of the running architecture.
var native = &table{
	audit:   unix.AUDIT_ARCH_X86_64,
	x32Bit:  x32SyscallBit,
	lowWord: 0, // little-endian

	denied: []denial{
		// Kernel attack surface a sandboxed program has no use for.
		{unix.SYS_IO_URING_SETUP, unix.EPERM},
		{unix.SYS_IO_URING_ENTER, unix.EPERM},
		{unix.SYS_IO_URING_REGISTER, unix.EPERM},
		{unix.SYS_PERF_EVENT_OPEN, unix.EPERM},
		{unix.SYS_USERFAULTFD, unix.EPERM},
		{unix.SYS_BPF, unix.EPERM},
		// The keyring is not namespaced.
		{unix.SYS_KEYCTL, unix.EPERM},
		{unix.SYS_ADD_KEY, unix.EPERM},
		{unix.SYS_REQUEST_KEY, unix.EPERM},
		// Reading and writing other processes.
		{unix.SYS_PTRACE, unix.EPERM},
		{unix.SYS_PROCESS_VM_READV, unix.EPERM},
		{unix.SYS_PROCESS_VM_WRITEV, unix.EPERM},
		// Replacing the kernel or loading code into it.
		{unix.SYS_KEXEC_LOAD, unix.EPERM},
		{unix.SYS_KEXEC_FILE_LOAD, unix.EPERM},
		{unix.SYS_INIT_MODULE, unix.EPERM},
		{unix.SYS_FINIT_MODULE, unix.EPERM},
		{unix.SYS_DELETE_MODULE, unix.EPERM},
		// The mount family, old and new API: the sandbox's mounts are
		// final once the program runs.
		{unix.SYS_MOUNT, unix.EPERM},
		{unix.SYS_UMOUNT2, unix.EPERM},
		{unix.SYS_PIVOT_ROOT, unix.EPERM},
		{unix.SYS_FSOPEN, unix.EPERM},
		{unix.SYS_FSCONFIG, unix.EPERM},
		{unix.SYS_FSMOUNT, unix.EPERM},
		{unix.SYS_FSPICK, unix.EPERM},
		{unix.SYS_MOVE_MOUNT, unix.EPERM},
		{unix.SYS_OPEN_TREE, unix.EPERM},
		{unix.SYS_MOUNT_SETATTR, unix.EPERM},
		// New namespaces and joining others; clone's flags are checked
		// by cloneRule.
		{unix.SYS_UNSHARE, unix.EPERM},
		{unix.SYS_SETNS, unix.EPERM},
		// clone3's flags sit behind a pointer the filter cannot read.
		// ENOSYS, as on a kernel older than 5.3, makes glibc (2.34+)
		// fall back to clone, whose flags cloneRule checks.
		{unix.SYS_CLONE3, unix.ENOSYS},
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
