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

	// The calls allowed whatever their arguments: those seen in the
	// traces of ordinary workloads, and those added on review. The
	// table's file says how each list was made.
	traced, reviewed []uint32
	refused          []denial // calls refused whatever their arguments
	// Calls whose effect is the whole machine's: aio and watch fail with
	// ENOSYS, writeback returns 0 and does nothing.
	aio, watch, writeback []uint32

	// Calls with argument rules.
	clone, ioctl, socket, socketpair, personality uint32
}

// denial is one refused call and the errno it fails with.
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

// unlistedErrno is the answer to a call on no list: the kernel's own
// answer for a call it does not have. glibc, Go and other runtimes take
// ENOSYS to mean "this kernel is older" and fall back (clone3 to clone,
// statx to fstatat, close_range to a loop of close, libnuma to no NUMA,
// libmount's statmount to /proc), where EPERM would be taken for a real
// refusal and fail the program. The calls the sandbox refuses on purpose
// are listed with their own errno (EPERM) in the table.
const unlistedErrno = unix.ENOSYS

// program returns the whole filter for t: the architecture check, the x32
// rule, then a binary search on the call number over the numbers' verdicts
// (see decide), whose leaves return or apply an argument rule. A call
// that no list names takes the unlisted leaf: ENOSYS.
func program(t *table) ([]bpf.Instruction, error) {
	var p []bpf.Instruction
	if !mutants.On(mutants.SeccompArchUnchecked) {
		p = append(p, checkArch(t)...)
	}
	p = append(p, bpf.LoadAbsolute{Off: offNr, Size: 4})
	p = append(p, denyX32(t)...)
	verdicts, err := decide(t)
	if err != nil {
		return nil, err
	}
	unlisted := leaf{ret: errnoAction(unlistedErrno)}
	// The planted defect: the denylist this filter replaced, whose
	// refusals and rules still hold while every unlisted call passes.
	if mutants.On(mutants.SeccompDefaultAllow) {
		unlisted = leaf{ret: retAllow}
	}
	return append(p, search(spans(verdicts, unlisted))...), nil
}

// leaf is what the filter does with one call number: return ret, or,
// when rule is set, run rule (which loads an argument and returns).
// listed tells a number a list names from one no list does.
type leaf struct {
	ret    uint32
	rule   []bpf.Instruction
	listed bool
}

// size is the number of instructions of l.
func (l leaf) size() int {
	if l.rule != nil {
		return len(l.rule)
	}
	return 1
}

// emit appends l's instructions to p.
func (l leaf) emit(p []bpf.Instruction) []bpf.Instruction {
	if l.rule != nil {
		return append(p, l.rule...)
	}
	return append(p, bpf.RetConstant{Val: l.ret})
}

// decide returns the leaf of every number up to the highest t names,
// indexed by number. A number named twice is an error: its verdict would
// depend on the order of the lists.
func decide(t *table) ([]leaf, error) {
	top := max(t.clone, t.ioctl, t.socket, t.socketpair, t.personality)
	for _, list := range [][]uint32{t.traced, t.reviewed, t.aio, t.watch, t.writeback} {
		for _, nr := range list {
			top = max(top, nr)
		}
	}
	for _, d := range t.refused {
		top = max(top, d.nr)
	}
	if top >= 1<<16 {
		return nil, fmt.Errorf("seccomp: system call %d is past any table", top)
	}
	out := make([]leaf, top+1)
	var dup []uint32
	set := func(nr uint32, l leaf) {
		if out[nr].listed {
			dup = append(dup, nr)
		}
		l.listed = true
		out[nr] = l
	}
	for _, nr := range t.traced {
		set(nr, leaf{ret: retAllow})
	}
	for _, nr := range t.reviewed {
		set(nr, leaf{ret: retAllow})
	}
	for _, d := range t.refused {
		set(d.nr, leaf{ret: errnoAction(d.errno)})
	}
	for _, g := range []struct {
		nrs    []uint32
		ret    uint32
		opened bool // by its planted defect
	}{
		{t.aio, errnoAction(unix.ENOSYS), mutants.On(mutants.AIOAllowed)},
		{t.watch, errnoAction(unix.ENOSYS), mutants.On(mutants.InotifyAllowed)},
		// An errno of 0 skips the call and returns 0: done, as far as
		// the program can tell.
		{t.writeback, errnoAction(0), mutants.On(mutants.SyncAllowed)},
	} {
		l := leaf{ret: g.ret}
		if g.opened {
			l.ret = retAllow
		}
		for _, nr := range g.nrs {
			set(nr, l)
		}
	}
	if !mutants.On(mutants.SeccompCloneUnchecked) {
		set(t.clone, leaf{rule: cloneRule(t)})
	} else {
		set(t.clone, leaf{ret: retAllow})
	}
	set(t.ioctl, leaf{rule: ioctlRule(t)})
	socket := socketRule(t)
	set(t.socket, leaf{rule: socket})
	set(t.socketpair, leaf{rule: socket})
	set(t.personality, leaf{rule: personalityRule(t)})
	if len(dup) > 0 {
		return nil, fmt.Errorf("seccomp: system calls %v are listed more than once", dup)
	}
	return out, nil
}

// span is a run of consecutive call numbers, from start up to the next
// span's start, that share one leaf.
type span struct {
	start uint32
	leaf  leaf
}

// spans covers every number from 0 up with the leaves of verdicts, and
// the numbers no list names (including every number past the end of
// verdicts) with unlisted. Neighbours that return the same value are one
// span; a rule's number is always a span of its own.
func spans(verdicts []leaf, unlisted leaf) []span {
	out := make([]span, 0, 128)
	add := func(start uint32, l leaf) {
		if n := len(out); n > 0 && l.rule == nil && out[n-1].leaf.rule == nil && out[n-1].leaf.ret == l.ret {
			return
		}
		out = append(out, span{start, l})
	}
	for nr, l := range verdicts {
		if !l.listed {
			l = unlisted
		}
		add(uint32(nr), l)
	}
	add(uint32(len(verdicts)), unlisted)
	return out
}

// search returns a binary search on A over s: each node compares A with
// the start of the upper half's first span. A conditional jump reaches
// 255 instructions at most; past that, the node jumps over the lower half
// with an unconditional jump.
func search(s []span) []bpf.Instruction {
	return emitSearch(make([]bpf.Instruction, 0, searchSize(s)), s)
}

func emitSearch(p []bpf.Instruction, s []span) []bpf.Instruction {
	if len(s) == 1 {
		return s[0].leaf.emit(p)
	}
	mid := len(s) / 2
	lower := searchSize(s[:mid])
	if lower <= 255 {
		p = append(p, bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: s[mid].start, SkipTrue: uint8(lower)})
	} else {
		p = append(p,
			bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: s[mid].start, SkipFalse: 1},
			bpf.Jump{Skip: uint32(lower)})
	}
	p = emitSearch(p, s[:mid])
	return emitSearch(p, s[mid:])
}

// searchSize is the length of search(s).
func searchSize(s []span) int {
	if len(s) == 1 {
		return s[0].leaf.size()
	}
	lower := searchSize(s[:len(s)/2])
	node := 1
	if lower > 255 {
		node = 2
	}
	return node + lower + searchSize(s[len(s)/2:])
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
// table, where the numbers differ (x32 ptrace is 521), so the lists below
// would be read wrong. EPERM, not ENOSYS: the kernel's own answer where
// x32 is compiled out is ENOSYS, and a distinct errno shows the filter at
// work.
func denyX32(t *table) []bpf.Instruction {
	if t.x32Bit == 0 {
		return nil
	}
	return []bpf.Instruction{
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: t.x32Bit, SkipFalse: 1},
		retErrno(unix.EPERM),
	}
}

// cloneRule refuses clone with any namespace flag. The kernel reads only
// the low 32 bits of clone's flags, and so does the rule.
func cloneRule(t *table) []bpf.Instruction {
	return []bpf.Instruction{
		loadArgLow(t, 0),
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: cloneNamespaces, SkipFalse: 1},
		retErrno(unix.EPERM),
		bpf.RetConstant{Val: retAllow},
	}
}

// ioctlRule refuses TIOCSTI (push input into a terminal: a sandboxed
// program sharing the caller's terminal could type commands into the
// caller's shell) and TIOCLINUX (the same through the virtual console's
// selection). The kernel's ioctl takes an unsigned int command, so only the
// low 32 bits are compared: comparing all 64 would let a command with high
// bits set through.
func ioctlRule(t *table) []bpf.Instruction {
	return append([]bpf.Instruction{loadArgLow(t, 1)},
		matchAny([]uint32{unix.TIOCSTI, unix.TIOCLINUX}, retErrno(unix.EPERM), bpf.RetConstant{Val: retAllow})...)
}

// socketRule lets socket and socketpair create AF_UNIX, AF_INET and
// AF_INET6 sockets only (family is an int: low 32 bits). The rest (netlink,
// packet, vsock, AF_ALG, ...) reach kernel code a Python program here has
// no use for. They fail with EAFNOSUPPORT, what a kernel built without the
// family answers, which libraries already treat as "not available here"
// and fall back from (glibc's getaddrinfo when its netlink query fails).
func socketRule(t *table) []bpf.Instruction {
	return append([]bpf.Instruction{loadArgLow(t, 0)},
		matchAny(allowedFamilies, bpf.RetConstant{Val: retAllow}, retErrno(unix.EAFNOSUPPORT))...)
}

// personalityRule allows only allowedPersonalities (the kernel's argument
// is an unsigned int: low 32 bits).
func personalityRule(t *table) []bpf.Instruction {
	return append([]bpf.Instruction{loadArgLow(t, 0)},
		matchAny(allowedPersonalities, bpf.RetConstant{Val: retAllow}, retErrno(unix.EPERM))...)
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
	return bpf.RetConstant{Val: errnoAction(errno)}
}

// errnoAction is the return value that fails a call with errno.
func errnoAction(errno unix.Errno) uint32 {
	return unix.SECCOMP_RET_ERRNO | uint32(errno)&unix.SECCOMP_RET_DATA
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
