package seccomp

import (
	"fmt"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"sandboxlab/mutants"
)

// table is what the program needs to know about one ABI: its audit
// architecture, its system-call numbers and where the low 32 bits of an
// argument sit in struct seccomp_data.
type table struct {
	audit   uint32 // AUDIT_ARCH_* of the native ABI
	x32Bit  uint32 // number bit of a second ABI sharing the entry (amd64's x32), or 0
	lowWord uint32 // offset of an argument's low 32 bits within its 8 bytes: 0 little-endian, 4 big-endian

	denied []denial // calls refused outright

	clone, ioctl, socket, socketpair, personality uint32
}

// denial is one call of the denylist and the errno it fails with.
type denial struct {
	nr    uint32
	errno unix.Errno
}

// Offsets in struct seccomp_data (include/uapi/linux/seccomp.h):
// int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
const (
	offNr   = 0
	offArch = 4
	offArgs = 16
)

// Return values.
const (
	retAllow       = unix.SECCOMP_RET_ALLOW
	retKillProcess = unix.SECCOMP_RET_KILL_PROCESS
)

// Namespace flags of clone(2). CLONE_NEWTIME (0x80) is missing on purpose:
// in clone's flags that bit is part of the exit-signal byte (CSIGNAL), so
// clone cannot create a time namespace and a check would refuse ordinary
// exit signals; unshare (denied outright) and clone3 (ENOSYS) are the ways
// to one.
const cloneNamespaces = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP

// Personality values a program may set: those of Docker's default profile
// (PER_LINUX, PER_LINUX32, UNAME26, UNAME26|PER_LINUX32) and the query
// 0xffffffff. The others switch on flags such as ADDR_NO_RANDOMIZE or
// READ_IMPLIES_EXEC that weaken the process's own hardening.
var allowedPersonalities = []uint32{0x0, 0x8, 0x20000, 0x20008, 0xffffffff}

// Socket families a Python program in the sandbox has a use for.
var allowedFamilies = []uint32{unix.AF_UNIX, unix.AF_INET, unix.AF_INET6}

// program returns the whole filter for t. On entry to each part after the
// architecture check, A holds the system-call number; a part either
// returns or falls through with A unchanged.
func program(t *table) []bpf.Instruction {
	var p []bpf.Instruction
	if !mutants.On(mutants.SeccompArchUnchecked) {
		p = append(p, checkArch(t)...)
	}
	p = append(p, bpf.LoadAbsolute{Off: offNr, Size: 4})
	p = append(p, denyX32(t)...)
	p = append(p, denyList(t)...)
	if !mutants.On(mutants.SeccompCloneUnchecked) {
		p = append(p, cloneRule(t)...)
	}
	p = append(p, ioctlRule(t)...)
	p = append(p, socketRule(t)...)
	p = append(p, personalityRule(t)...)
	return append(p, bpf.RetConstant{Val: retAllow})
}

// checkArch kills the process on a call from another ABI than t's. The
// numbers compared below mean other calls there (on amd64, 32-bit call 26
// is ptrace, 64-bit 26 is msync), so an errno would be a guess, and no
// program in the sandbox legitimately uses another ABI: killing is the
// only answer that cannot be wrong, and SIGSYS makes the cause plain.
func checkArch(t *table) []bpf.Instruction {
	return []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: t.audit, SkipTrue: 1},
		bpf.RetConstant{Val: retKillProcess},
	}
}

// denyX32 refuses native calls whose number has the x32 bit set. They
// arrive with the native audit architecture but are looked up in the x32
// table, where the numbers of denied calls differ (x32 ptrace is 521), so
// the denylist below would miss them. EPERM, not ENOSYS: the kernel's own
// answer where x32 is compiled out is ENOSYS, and a distinct errno shows
// the filter at work.
func denyX32(t *table) []bpf.Instruction {
	if t.x32Bit == 0 {
		return nil
	}
	return []bpf.Instruction{
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: t.x32Bit, SkipFalse: 1},
		retErrno(unix.EPERM),
	}
}

// denyList refuses the calls of t.denied whatever their arguments.
func denyList(t *table) []bpf.Instruction {
	var p []bpf.Instruction
	for _, d := range t.denied {
		p = append(p,
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: d.nr, SkipFalse: 1},
			retErrno(d.errno))
	}
	return p
}

// cloneRule refuses clone with any namespace flag. The kernel reads only
// the low 32 bits of clone's flags, and so does the rule.
func cloneRule(t *table) []bpf.Instruction {
	return onCall([]uint32{t.clone},
		loadArgLow(t, 0),
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: cloneNamespaces, SkipFalse: 1},
		retErrno(unix.EPERM),
		bpf.RetConstant{Val: retAllow},
	)
}

// ioctlRule refuses TIOCSTI (push input into a terminal: a sandboxed
// program sharing the caller's terminal could type commands into the
// caller's shell) and TIOCLINUX (the same through the virtual console's
// selection). The kernel's ioctl takes an unsigned int command, so only the
// low 32 bits are compared: comparing all 64 would let a command with high
// bits set through.
func ioctlRule(t *table) []bpf.Instruction {
	return onCall([]uint32{t.ioctl},
		append([]bpf.Instruction{loadArgLow(t, 1)},
			matchAny([]uint32{unix.TIOCSTI, unix.TIOCLINUX}, retErrno(unix.EPERM), bpf.RetConstant{Val: retAllow})...)...)
}

// socketRule lets socket and socketpair create AF_UNIX, AF_INET and
// AF_INET6 sockets only (family is an int: low 32 bits). The rest (netlink,
// packet, vsock, AF_ALG, ...) reach kernel code a Python program here has
// no use for. They fail with EAFNOSUPPORT, what a kernel built without the
// family answers, which libraries already treat as "not available here"
// and fall back from (glibc's getaddrinfo when its netlink query fails).
func socketRule(t *table) []bpf.Instruction {
	return onCall([]uint32{t.socket, t.socketpair},
		append([]bpf.Instruction{loadArgLow(t, 0)},
			matchAny(allowedFamilies, bpf.RetConstant{Val: retAllow}, retErrno(unix.EAFNOSUPPORT))...)...)
}

// personalityRule allows only allowedPersonalities (the kernel's argument
// is an unsigned int: low 32 bits).
func personalityRule(t *table) []bpf.Instruction {
	return onCall([]uint32{t.personality},
		append([]bpf.Instruction{loadArgLow(t, 0)},
			matchAny(allowedPersonalities, bpf.RetConstant{Val: retAllow}, retErrno(unix.EPERM))...)...)
}

// onCall runs body when A (the call number) is one of nrs and skips it
// otherwise. body must end in a return.
func onCall(nrs []uint32, body ...bpf.Instruction) []bpf.Instruction {
	p := make([]bpf.Instruction, 0, len(nrs)+len(body))
	for i, nr := range nrs {
		if i < len(nrs)-1 {
			p = append(p, bpf.JumpIf{Cond: bpf.JumpEqual, Val: nr, SkipTrue: jumpLen(len(nrs) - 1 - i)})
		} else {
			p = append(p, bpf.JumpIf{Cond: bpf.JumpEqual, Val: nr, SkipFalse: jumpLen(len(body))})
		}
	}
	return append(p, body...)
}

// matchAny compares A with each of vals and returns with hit on a match,
// with miss otherwise.
func matchAny(vals []uint32, hit, miss bpf.Instruction) []bpf.Instruction {
	p := make([]bpf.Instruction, 0, len(vals)+2)
	for i, v := range vals {
		p = append(p, bpf.JumpIf{Cond: bpf.JumpEqual, Val: v, SkipTrue: jumpLen(len(vals) - i)})
	}
	return append(p, miss, hit)
}

// loadArgLow loads the low 32 bits of argument i into A.
func loadArgLow(t *table, i uint32) bpf.Instruction {
	return bpf.LoadAbsolute{Off: offArgs + 8*i + t.lowWord, Size: 4}
}

// retErrno fails the call with errno.
func retErrno(errno unix.Errno) bpf.Instruction {
	return bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(errno)&unix.SECCOMP_RET_DATA}
}

// jumpLen converts a jump distance; classic BPF's conditional jumps reach at
// most 255 instructions, and the rules here are far shorter.
func jumpLen(n int) uint8 {
	if n < 0 || n > 255 {
		panic(fmt.Sprintf("seccomp: conditional jump of %d instructions", n))
	}
	return uint8(n)
}

// assemble turns the program into the kernel's form.
func assemble(p []bpf.Instruction) ([]unix.SockFilter, error) {
	if len(p) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("seccomp: program of %d instructions, more than BPF_MAXINSNS", len(p))
	}
	raw, err := bpf.Assemble(p)
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	out := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		out[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return out, nil
}
