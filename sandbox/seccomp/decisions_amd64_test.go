package seccomp

import (
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/skip"

	"sandboxlab/mutants"
)

// The tests in this file run the program built by Build through an
// interpreter of the part of classic BPF that seccomp accepts, on struct
// seccomp_data laid out as the kernel does (native byte order). They need
// no kernel support and check every decision exactly, including those the
// kernel would hide in the probes (a call it refuses with EPERM anyway).
// Their expectations are written out here, not taken from the table.

const auditArchI386 = 0x40000003 // AUDIT_ARCH_I386 (linux/audit.h)

// Personality values (linux/personality.h).
const (
	perLinux32       = 0x0008
	uname26          = 0x0020000
	addrNoRandomize  = 0x0040000
	readImpliesExec  = 0x0400000
	addrLimit32Bit   = 0x0800000 // PER_LINUX_32BIT without the PER_LINUX 0
	personalityQuery = 0xffffffff
)

const high = 1 << 32 // a bit the kernel drops from a 32-bit argument

// call is one system call as seccomp sees it.
type call struct {
	arch uint32
	nr   uint32
	args [6]uint64
}

func (c call) String() string {
	return fmt.Sprintf("arch=%#x nr=%d args=%#x", c.arch, int32(c.nr), c.args)
}

// data is struct seccomp_data in native (little-endian) byte order.
func (c call) data() []byte {
	b := make([]byte, 64)
	binary.LittleEndian.PutUint32(b[0:], c.nr)
	binary.LittleEndian.PutUint32(b[4:], c.arch)
	for i, a := range c.args {
		binary.LittleEndian.PutUint64(b[16+8*i:], a)
	}
	return b
}

func x86(nr uint32, args ...uint64) call {
	c := call{arch: unix.AUDIT_ARCH_X86_64, nr: nr}
	copy(c.args[:], args)
	return c
}

// eval runs prog on c as the kernel would and returns the action.
func eval(prog []unix.SockFilter, c call) (uint32, error) {
	in := c.data()
	var a uint32
	for pc := 0; pc < len(prog); pc++ {
		ins := prog[pc]
		switch ins.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			if ins.K%4 != 0 || ins.K+4 > uint32(len(in)) {
				return 0, fmt.Errorf("pc %d: load at offset %d: seccomp takes aligned 32-bit loads within seccomp_data", pc, ins.K)
			}
			a = binary.LittleEndian.Uint32(in[ins.K:])
		case unix.BPF_JMP | unix.BPF_JA:
			pc += int(ins.K)
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			pc += cond(a == ins.K, ins)
		case unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K:
			pc += cond(a > ins.K, ins)
		case unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			pc += cond(a >= ins.K, ins)
		case unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			pc += cond(a&ins.K != 0, ins)
		case unix.BPF_RET | unix.BPF_K:
			return ins.K, nil
		default:
			return 0, fmt.Errorf("pc %d: opcode %#x is not one this package should emit", pc, ins.Code)
		}
	}
	return 0, fmt.Errorf("ran off the end of the program")
}

func cond(ok bool, ins unix.SockFilter) int {
	if ok {
		return int(ins.Jt)
	}
	return int(ins.Jf)
}

func errnoRet(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }

func actionString(r uint32) string {
	switch {
	case r == unix.SECCOMP_RET_ALLOW:
		return "allow"
	case r == unix.SECCOMP_RET_KILL_PROCESS:
		return "kill-process"
	case r&unix.SECCOMP_RET_ACTION_FULL == unix.SECCOMP_RET_ERRNO:
		return "errno " + unix.ErrnoName(unix.Errno(r&unix.SECCOMP_RET_DATA))
	}
	return fmt.Sprintf("%#x", r)
}

// The calls denied whatever their arguments, and how.
var wantDenied = map[string]struct {
	nr    uint32
	errno unix.Errno
}{
	"io_uring_setup":    {unix.SYS_IO_URING_SETUP, unix.EPERM},
	"io_uring_enter":    {unix.SYS_IO_URING_ENTER, unix.EPERM},
	"io_uring_register": {unix.SYS_IO_URING_REGISTER, unix.EPERM},
	"perf_event_open":   {unix.SYS_PERF_EVENT_OPEN, unix.EPERM},
	"userfaultfd":       {unix.SYS_USERFAULTFD, unix.EPERM},
	"bpf":               {unix.SYS_BPF, unix.EPERM},
	"keyctl":            {unix.SYS_KEYCTL, unix.EPERM},
	"add_key":           {unix.SYS_ADD_KEY, unix.EPERM},
	"request_key":       {unix.SYS_REQUEST_KEY, unix.EPERM},
	"ptrace":            {unix.SYS_PTRACE, unix.EPERM},
	"process_vm_readv":  {unix.SYS_PROCESS_VM_READV, unix.EPERM},
	"process_vm_writev": {unix.SYS_PROCESS_VM_WRITEV, unix.EPERM},
	"kexec_load":        {unix.SYS_KEXEC_LOAD, unix.EPERM},
	"kexec_file_load":   {unix.SYS_KEXEC_FILE_LOAD, unix.EPERM},
	"init_module":       {unix.SYS_INIT_MODULE, unix.EPERM},
	"finit_module":      {unix.SYS_FINIT_MODULE, unix.EPERM},
	"delete_module":     {unix.SYS_DELETE_MODULE, unix.EPERM},
	"mount":             {unix.SYS_MOUNT, unix.EPERM},
	"umount2":           {unix.SYS_UMOUNT2, unix.EPERM},
	"pivot_root":        {unix.SYS_PIVOT_ROOT, unix.EPERM},
	"fsopen":            {unix.SYS_FSOPEN, unix.EPERM},
	"fsconfig":          {unix.SYS_FSCONFIG, unix.EPERM},
	"fsmount":           {unix.SYS_FSMOUNT, unix.EPERM},
	"fspick":            {unix.SYS_FSPICK, unix.EPERM},
	"move_mount":        {unix.SYS_MOVE_MOUNT, unix.EPERM},
	"open_tree":         {unix.SYS_OPEN_TREE, unix.EPERM},
	"mount_setattr":     {unix.SYS_MOUNT_SETATTR, unix.EPERM},
	"unshare":           {unix.SYS_UNSHARE, unix.EPERM},
	"setns":             {unix.SYS_SETNS, unix.EPERM},
	"clone3":            {unix.SYS_CLONE3, unix.ENOSYS},
	"swapon":            {unix.SYS_SWAPON, unix.EPERM},
	"swapoff":           {unix.SYS_SWAPOFF, unix.EPERM},
	"reboot":            {unix.SYS_REBOOT, unix.EPERM},
	"acct":              {unix.SYS_ACCT, unix.EPERM},
	"quotactl":          {unix.SYS_QUOTACTL, unix.EPERM},
	"quotactl_fd":       {unix.SYS_QUOTACTL_FD, unix.EPERM},
	"open_by_handle_at": {unix.SYS_OPEN_BY_HANDLE_AT, unix.EPERM},
	"name_to_handle_at": {unix.SYS_NAME_TO_HANDLE_AT, unix.EPERM},
	"syslog":            {unix.SYS_SYSLOG, unix.EPERM},
	"uselib":            {unix.SYS_USELIB, unix.EPERM},
	"vhangup":           {unix.SYS_VHANGUP, unix.EPERM},
	"iopl":              {unix.SYS_IOPL, unix.EPERM},
	"ioperm":            {unix.SYS_IOPERM, unix.EPERM},
}

// The calls the allowlist refuses on purpose beyond the old denylist's,
// and how: the held-out corpus got a mount-family call, the clock and
// fanotify through the denylist.
var wantRefusedNew = map[string]struct {
	nr    uint32
	errno unix.Errno
}{
	"open_tree_attr":  {unix.SYS_OPEN_TREE_ATTR, unix.EPERM},
	"chroot":          {unix.SYS_CHROOT, unix.EPERM},
	"clock_settime":   {unix.SYS_CLOCK_SETTIME, unix.EPERM},
	"clock_adjtime":   {unix.SYS_CLOCK_ADJTIME, unix.EPERM},
	"adjtimex":        {unix.SYS_ADJTIMEX, unix.EPERM},
	"settimeofday":    {unix.SYS_SETTIMEOFDAY, unix.EPERM},
	"fanotify_init":   {unix.SYS_FANOTIFY_INIT, unix.EPERM},
	"fanotify_mark":   {unix.SYS_FANOTIFY_MARK, unix.EPERM},
	"sethostname":     {unix.SYS_SETHOSTNAME, unix.EPERM},
	"setdomainname":   {unix.SYS_SETDOMAINNAME, unix.EPERM},
	"lookup_dcookie":  {unix.SYS_LOOKUP_DCOOKIE, unix.EPERM},
	"kcmp":            {unix.SYS_KCMP, unix.EPERM},
	"pidfd_getfd":     {unix.SYS_PIDFD_GETFD, unix.EPERM},
	"process_madvise": {unix.SYS_PROCESS_MADVISE, unix.EPERM},
}

// The calls whose effect is the whole machine's (issue 43): the old
// asynchronous I/O and inotify fail as where the kernel lacks them, and sync and
// syncfs return 0 without being made (errno 0).
var wantMachineWide = map[string]struct {
	nr    uint32
	errno unix.Errno
}{
	"io_setup":          {unix.SYS_IO_SETUP, unix.ENOSYS},
	"io_destroy":        {unix.SYS_IO_DESTROY, unix.ENOSYS},
	"io_submit":         {unix.SYS_IO_SUBMIT, unix.ENOSYS},
	"io_cancel":         {unix.SYS_IO_CANCEL, unix.ENOSYS},
	"io_getevents":      {unix.SYS_IO_GETEVENTS, unix.ENOSYS},
	"io_pgetevents":     {unix.SYS_IO_PGETEVENTS, unix.ENOSYS},
	"inotify_init":      {unix.SYS_INOTIFY_INIT, unix.ENOSYS},
	"inotify_init1":     {unix.SYS_INOTIFY_INIT1, unix.ENOSYS},
	"inotify_add_watch": {unix.SYS_INOTIFY_ADD_WATCH, unix.ENOSYS},
	"inotify_rm_watch":  {unix.SYS_INOTIFY_RM_WATCH, unix.ENOSYS},
	"sync":              {unix.SYS_SYNC, 0},
	"syncfs":            {unix.SYS_SYNCFS, 0},
}

// Calls on no list, which fail with ENOSYS: some the kernel has (the
// mount queries, NUMA placement, newer forms of the xattr and attribute
// calls, obsolete ones), and numbers it has not given out yet.
var wantUnlisted = map[string]uint32{
	"statmount":         unix.SYS_STATMOUNT,
	"listmount":         unix.SYS_LISTMOUNT,
	"cachestat":         unix.SYS_CACHESTAT,
	"memfd_secret":      unix.SYS_MEMFD_SECRET,
	"modify_ldt":        unix.SYS_MODIFY_LDT,
	"mbind":             unix.SYS_MBIND,
	"get_mempolicy":     unix.SYS_GET_MEMPOLICY,
	"migrate_pages":     unix.SYS_MIGRATE_PAGES,
	"move_pages":        unix.SYS_MOVE_PAGES,
	"remap_file_pages":  unix.SYS_REMAP_FILE_PAGES,
	"setxattrat":        unix.SYS_SETXATTRAT,
	"file_setattr":      unix.SYS_FILE_SETATTR,
	"lsm_set_self_attr": unix.SYS_LSM_SET_SELF_ATTR,
	"listns":            unix.SYS_LISTNS,
	"process_mrelease":  unix.SYS_PROCESS_MRELEASE,
	"get_robust_list":   unix.SYS_GET_ROBUST_LIST,
	"set_thread_area":   unix.SYS_SET_THREAD_AREA,
	"sysfs":             unix.SYS_SYSFS,
	"nfsservctl":        unix.SYS_NFSSERVCTL,
	"472 (next free)":   472,
	"1000":              1000,
	"0x3fffffff":        0x3fffffff,
	"bit 31 only":       0x80000000,
	"0xbfffffff":        0xbfffffff,
}

// Flag sets real programs pass to clone: glibc's fork and pthread_create,
// Go's os/exec (vfork) and its new threads.
var benignCloneFlags = map[string]uint64{
	"fork":           unix.CLONE_CHILD_SETTID | unix.CLONE_CHILD_CLEARTID | uint64(unix.SIGCHLD),
	"pthread_create": unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD | unix.CLONE_SYSVSEM | unix.CLONE_SETTLS | unix.CLONE_PARENT_SETTID | unix.CLONE_CHILD_CLEARTID,
	"vfork":          unix.CLONE_VM | unix.CLONE_VFORK | uint64(unix.SIGCHLD),
	"go-exec":        unix.CLONE_VM | unix.CLONE_VFORK | unix.CLONE_PIDFD | uint64(unix.SIGCHLD),
	"go-thread":      unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_SYSVSEM | unix.CLONE_THREAD,
	"signal-byte":    0x80 | 0x7f, // CLONE_NEWTIME's bit is part of the exit signal here
	"high-bits-only": high,
}

var namespaceFlags = map[string]uint64{
	"CLONE_NEWNS":     unix.CLONE_NEWNS,
	"CLONE_NEWUTS":    unix.CLONE_NEWUTS,
	"CLONE_NEWIPC":    unix.CLONE_NEWIPC,
	"CLONE_NEWUSER":   unix.CLONE_NEWUSER,
	"CLONE_NEWPID":    unix.CLONE_NEWPID,
	"CLONE_NEWNET":    unix.CLONE_NEWNET,
	"CLONE_NEWCGROUP": unix.CLONE_NEWCGROUP,
}

func TestDecisions(t *testing.T) {
	prog := build(t)
	allow := uint32(unix.SECCOMP_RET_ALLOW)
	kill := uint32(unix.SECCOMP_RET_KILL_PROCESS)
	eperm, eafnosupport, enosys := errnoRet(unix.EPERM), errnoRet(unix.EAFNOSUPPORT), errnoRet(unix.ENOSYS)

	type tc struct {
		name string
		c    call
		want uint32
	}
	cases := []tc{
		{"native getpid", x86(unix.SYS_GETPID), allow},
		{"i386 entry: getpid", call{arch: auditArchI386, nr: 20}, kill},
		{"i386 entry: ptrace (26)", call{arch: auditArchI386, nr: 26}, kill},
		{"i386 entry: x86-64 number 0", call{arch: auditArchI386, nr: 0}, kill},
		{"aarch64", call{arch: unix.AUDIT_ARCH_AARCH64, nr: unix.SYS_GETPID}, kill},
		{"arch 0", call{arch: 0, nr: unix.SYS_GETPID}, kill},
		{"x32 getpid", x86(0x40000000 | unix.SYS_GETPID), eperm},
		{"x32 ptrace (521)", x86(0x40000000 | 521), eperm},
		{"x32 bit with high numbers", x86(0xc0000000 | unix.SYS_READ), eperm},

		{"ioctl TIOCSTI", x86(unix.SYS_IOCTL, 0, unix.TIOCSTI), eperm},
		{"ioctl TIOCSTI, high bits set", x86(unix.SYS_IOCTL, 0, high|unix.TIOCSTI), eperm},
		{"ioctl TIOCSTI, all high bits set", x86(unix.SYS_IOCTL, 0, 0xffffffff00000000|unix.TIOCSTI), eperm},
		{"ioctl TIOCLINUX", x86(unix.SYS_IOCTL, 0, unix.TIOCLINUX), eperm},
		{"ioctl TIOCLINUX, high bits set", x86(unix.SYS_IOCTL, 0, high|unix.TIOCLINUX), eperm},
		{"ioctl TCGETS", x86(unix.SYS_IOCTL, 0, unix.TCGETS), allow},
		{"ioctl TIOCGWINSZ", x86(unix.SYS_IOCTL, 1, unix.TIOCGWINSZ), allow},
		{"ioctl FIONREAD", x86(unix.SYS_IOCTL, 3, unix.TIOCINQ), allow},
		{"ioctl fd TIOCSTI, cmd 0", x86(unix.SYS_IOCTL, unix.TIOCSTI, 0), allow},

		{"personality query", x86(unix.SYS_PERSONALITY, personalityQuery), allow},
		{"personality PER_LINUX", x86(unix.SYS_PERSONALITY, 0), allow},
		{"personality PER_LINUX32", x86(unix.SYS_PERSONALITY, perLinux32), allow},
		{"personality UNAME26", x86(unix.SYS_PERSONALITY, uname26), allow},
		{"personality UNAME26|PER_LINUX32", x86(unix.SYS_PERSONALITY, uname26|perLinux32), allow},
		{"personality query, high bits set", x86(unix.SYS_PERSONALITY, high|personalityQuery), allow},
		{"personality ADDR_NO_RANDOMIZE", x86(unix.SYS_PERSONALITY, addrNoRandomize), eperm},
		{"personality READ_IMPLIES_EXEC", x86(unix.SYS_PERSONALITY, readImpliesExec), eperm},
		{"personality PER_LINUX_32BIT", x86(unix.SYS_PERSONALITY, addrLimit32Bit), eperm},
		{"personality PER_LINUX32|ADDR_NO_RANDOMIZE", x86(unix.SYS_PERSONALITY, perLinux32|addrNoRandomize), eperm},
		{"personality ADDR_NO_RANDOMIZE, high bits set", x86(unix.SYS_PERSONALITY, high|addrNoRandomize), eperm},
		{"personality 0xfffffffe", x86(unix.SYS_PERSONALITY, 0xfffffffe), eperm},
	}
	for _, refused := range []map[string]struct {
		nr    uint32
		errno unix.Errno
	}{wantDenied, wantRefusedNew, wantMachineWide} {
		for name, d := range refused {
			cases = append(cases,
				tc{name, x86(d.nr), errnoRet(d.errno)},
				tc{name + " with arguments", x86(d.nr, ^uint64(0), 1, 2, 3, 4, 5), errnoRet(d.errno)})
		}
	}
	for name, nr := range wantUnlisted {
		cases = append(cases,
			tc{name, x86(nr), enosys},
			tc{name + " with arguments", x86(nr, ^uint64(0), 1, 2, 3, 4, 5), enosys})
	}
	for name, flags := range benignCloneFlags {
		cases = append(cases, tc{"clone " + name, x86(unix.SYS_CLONE, flags), allow})
	}
	for name, flag := range namespaceFlags {
		cases = append(cases,
			tc{"clone " + name, x86(unix.SYS_CLONE, flag|uint64(unix.SIGCHLD)), eperm},
			tc{"clone " + name + ", high bits set", x86(unix.SYS_CLONE, high|flag), eperm},
			tc{"clone pthread_create|" + name, x86(unix.SYS_CLONE, benignCloneFlags["pthread_create"]|flag), eperm})
	}
	for _, nr := range []uint32{unix.SYS_SOCKET, unix.SYS_SOCKETPAIR} {
		for fam, want := range map[string]uint32{
			"AF_UNIX": allow, "AF_INET": allow, "AF_INET6": allow,
			"AF_UNSPEC": eafnosupport, "AF_NETLINK": eafnosupport, "AF_PACKET": eafnosupport,
			"AF_VSOCK": eafnosupport, "AF_ALG": eafnosupport, "AF_BLUETOOTH": eafnosupport,
			"AF_KEY": eafnosupport, "AF_XDP": eafnosupport, "AF_RDS": eafnosupport,
		} {
			f := map[string]uint64{
				"AF_UNIX": unix.AF_UNIX, "AF_INET": unix.AF_INET, "AF_INET6": unix.AF_INET6,
				"AF_UNSPEC": unix.AF_UNSPEC, "AF_NETLINK": unix.AF_NETLINK, "AF_PACKET": unix.AF_PACKET,
				"AF_VSOCK": unix.AF_VSOCK, "AF_ALG": unix.AF_ALG, "AF_BLUETOOTH": unix.AF_BLUETOOTH,
				"AF_KEY": unix.AF_KEY, "AF_XDP": unix.AF_XDP, "AF_RDS": unix.AF_RDS,
			}[fam]
			name := fmt.Sprintf("%s(%s)", map[uint32]string{unix.SYS_SOCKET: "socket", unix.SYS_SOCKETPAIR: "socketpair"}[nr], fam)
			cases = append(cases,
				tc{name, x86(nr, f, unix.SOCK_STREAM|unix.SOCK_CLOEXEC), want},
				tc{name + ", high bits set", x86(nr, high|f, unix.SOCK_DGRAM), want})
		}
	}
	// Everyday calls whose arguments no rule looks at: the lowest and
	// highest numbers of the table, calls of every workload traced, the
	// Go runtime's and those whose fallback the filter relies on.
	for _, nr := range []uint32{unix.SYS_READ, unix.SYS_WRITE, unix.SYS_OPENAT, unix.SYS_EXECVE,
		unix.SYS_FUTEX, unix.SYS_MMAP, unix.SYS_EXIT_GROUP, unix.SYS_WAIT4, unix.SYS_KILL,
		unix.SYS_FORK, unix.SYS_VFORK, unix.SYS_EPOLL_WAIT, unix.SYS_GETRANDOM, unix.SYS_PRCTL,
		unix.SYS_SECCOMP, unix.SYS_RT_SIGRETURN, unix.SYS_CONNECT, unix.SYS_BIND,
		unix.SYS_RESTART_SYSCALL, unix.SYS_PIPE, unix.SYS_PIPE2, unix.SYS_STATX,
		unix.SYS_NEWFSTATAT, unix.SYS_CLOSE_RANGE, unix.SYS_FACCESSAT2, unix.SYS_RSEQ,
		unix.SYS_SET_ROBUST_LIST, unix.SYS_CLOCK_NANOSLEEP, unix.SYS_SCHED_YIELD,
		unix.SYS_SIGALTSTACK, unix.SYS_TGKILL, unix.SYS_PRLIMIT64, unix.SYS_FCHOWNAT,
		unix.SYS_UTIMENSAT, unix.SYS_COPY_FILE_RANGE, unix.SYS_SENDFILE, unix.SYS_FLOCK,
		unix.SYS_PIDFD_OPEN, unix.SYS_WAITID, unix.SYS_EPOLL_PWAIT2, unix.SYS_SHMGET,
		unix.SYS_MSGGET, unix.SYS_SEMGET, unix.SYS_MQ_OPEN, unix.SYS_LANDLOCK_RESTRICT_SELF,
		unix.SYS_FUTEX_REQUEUE, unix.SYS_FCHMODAT2, unix.SYS_MSEAL} {
		cases = append(cases, tc{fmt.Sprintf("syscall %d", nr), x86(nr, ^uint64(0), ^uint64(0), ^uint64(0)), allow})
	}

	for _, tc := range cases {
		got, err := eval(prog, tc.c)
		if !assert.Check(t, err, "%s (%v)", tc.name, tc.c) {
			continue
		}
		assert.Check(t, is.Equal(actionString(got), actionString(tc.want)), "%s (%v)", tc.name, tc.c)
	}
}

// TestEveryNumberAsTheTableSays sweeps every number up to 1023 and a few
// beyond, with zero arguments, through the assembled program: each must
// get what the table gives it, the unlisted ones ENOSYS. Unlike the tests
// above it takes its expectations from the table on purpose: it checks
// the binary search (its bounds, its jumps, its merged spans), not the
// policy.
func TestEveryNumberAsTheTableSays(t *testing.T) {
	prog := build(t)
	want := map[uint32]uint32{
		// The argument rules, with zero arguments.
		unix.SYS_CLONE:       unix.SECCOMP_RET_ALLOW,
		unix.SYS_IOCTL:       unix.SECCOMP_RET_ALLOW,
		unix.SYS_PERSONALITY: unix.SECCOMP_RET_ALLOW,
		unix.SYS_SOCKET:      errnoRet(unix.EAFNOSUPPORT), // family 0 is AF_UNSPEC
		unix.SYS_SOCKETPAIR:  errnoRet(unix.EAFNOSUPPORT),
	}
	for _, list := range [][]uint32{native.traced, native.reviewed} {
		for _, nr := range list {
			want[nr] = unix.SECCOMP_RET_ALLOW
		}
	}
	for _, d := range native.refused {
		want[d.nr] = errnoRet(d.errno)
	}
	for _, nr := range slices.Concat(native.aio, native.watch) {
		want[nr] = errnoRet(unix.ENOSYS)
	}
	for _, nr := range native.writeback {
		want[nr] = errnoRet(0)
	}
	nrs := []uint32{0x3fffffff, 0x80000000, 0xbfffffff}
	for nr := uint32(0); nr < 1024; nr++ {
		nrs = append(nrs, nr)
	}
	allowed := 0
	for _, nr := range nrs {
		exp, ok := want[nr]
		if !ok {
			exp = errnoRet(unix.ENOSYS)
		}
		if exp == unix.SECCOMP_RET_ALLOW {
			allowed++
		}
		got, err := eval(prog, x86(nr))
		assert.NilError(t, err)
		assert.Check(t, is.Equal(actionString(got), actionString(exp)), "syscall %d", nr)
	}
	t.Logf("%d numbers allowed with zero arguments", allowed)
	got, err := eval(prog, x86(^uint32(0))) // syscall(-1): the x32 bit is set
	assert.NilError(t, err)
	assert.Check(t, is.Equal(actionString(got), "errno EPERM"))
}

// TestSearchLongJumps builds a search over more spans than a conditional
// jump can skip, so that its nodes need the unconditional jump, and checks
// every number.
func TestSearchLongJumps(t *testing.T) {
	var s []span
	want := map[uint32]uint32{}
	for i := uint32(0); i < 600; i++ {
		ret := errnoRet(unix.Errno(1 + i%2))
		if i%5 == 0 {
			ret = unix.SECCOMP_RET_ALLOW
		}
		// Spans of three numbers; a return differs from its neighbours'.
		s = append(s, span{start: 3 * i, leaf: leaf{ret: ret + i%3<<8}})
		for nr := 3 * i; nr < 3*i+3; nr++ {
			want[nr] = ret + i%3<<8
		}
	}
	prog, err := assemble(append([]bpf.Instruction{bpf.LoadAbsolute{Off: offNr, Size: 4}}, search(s)...))
	assert.NilError(t, err)
	long := 0
	for _, ins := range prog {
		if ins.Code == unix.BPF_JMP|unix.BPF_JA {
			long++
		}
	}
	assert.Check(t, long > 0, "no unconditional jump in %d instructions", len(prog))
	for nr := uint32(0); nr < 3*600+10; nr++ {
		exp, ok := want[nr]
		if !ok {
			exp = want[3*599] // the last span runs on
		}
		got, err := eval(prog, x86(nr))
		assert.NilError(t, err)
		assert.Check(t, is.Equal(got, exp), "number %d", nr)
	}
}

// TestListedTwiceIsAnError: a number on two lists would take whichever
// verdict the builder met last; Build refuses it instead.
func TestListedTwiceIsAnError(t *testing.T) {
	build(t)
	bad := *native
	bad.reviewed = append(slices.Clone(bad.reviewed), unix.SYS_MOUNT)
	_, err := program(&bad)
	assert.Check(t, is.ErrorContains(err, fmt.Sprintf("[%d]", unix.SYS_MOUNT)))
	bad = *native
	bad.traced = append(slices.Clone(bad.traced), unix.SYS_IOCTL)
	_, err = program(&bad)
	assert.Check(t, is.ErrorContains(err, "listed more than once"))
}

// TestDefaultAllowDefect: the planted defect seccomp_default_allow lets
// the unlisted calls through and changes nothing else.
func TestDefaultAllowDefect(t *testing.T) {
	build(t)
	skip.If(t, !mutants.Compiled, "built without the planted defects")
	assert.NilError(t, mutants.Enable(string(mutants.SeccompDefaultAllow)))
	prog, err := Build()
	assert.NilError(t, mutants.Enable(""))
	assert.NilError(t, err)
	for name, nr := range wantUnlisted {
		got, err := eval(prog, x86(nr))
		assert.NilError(t, err)
		assert.Check(t, is.Equal(actionString(got), "allow"), name)
	}
	for name, d := range wantDenied {
		got, err := eval(prog, x86(d.nr))
		assert.NilError(t, err)
		assert.Check(t, is.Equal(actionString(got), actionString(errnoRet(d.errno))), name)
	}
	for name, c := range map[string]call{
		"clone CLONE_NEWUSER": x86(unix.SYS_CLONE, unix.CLONE_NEWUSER),
		"socket AF_NETLINK":   x86(unix.SYS_SOCKET, unix.AF_NETLINK),
		"ioctl TIOCSTI":       x86(unix.SYS_IOCTL, 0, unix.TIOCSTI),
		"x32 getpid":          x86(0x40000000 | unix.SYS_GETPID),
	} {
		got, err := eval(prog, c)
		assert.NilError(t, err)
		assert.Check(t, actionString(got) != "allow", name)
	}
	got, err := eval(prog, call{arch: auditArchI386, nr: 20})
	assert.NilError(t, err)
	assert.Check(t, is.Equal(actionString(got), "kill-process"))
}

// TestWellFormed checks what the kernel's checker would: length, jumps
// within the program, a return at the end, only opcodes seccomp accepts.
func TestWellFormed(t *testing.T) {
	prog := build(t)
	assert.Assert(t, len(prog) > 0)
	assert.Check(t, len(prog) < unix.BPF_MAXINSNS, "%d instructions", len(prog))
	t.Logf("%d instructions", len(prog))
	last := prog[len(prog)-1]
	assert.Check(t, is.Equal(last.Code, uint16(unix.BPF_RET|unix.BPF_K)), "last instruction %+v", last)
	for pc, ins := range prog {
		switch ins.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			assert.Check(t, ins.K%4 == 0 && ins.K < 64, "pc %d: load at %d", pc, ins.K)
		case unix.BPF_JMP | unix.BPF_JA:
			assert.Check(t, pc+1+int(ins.K) < len(prog), "pc %d: jump %d out of range", pc, ins.K)
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K,
			unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			assert.Check(t, pc+1+int(ins.Jt) < len(prog), "pc %d: true branch %d out of range", pc, ins.Jt)
			assert.Check(t, pc+1+int(ins.Jf) < len(prog), "pc %d: false branch %d out of range", pc, ins.Jf)
		case unix.BPF_RET | unix.BPF_K:
		default:
			t.Errorf("pc %d: opcode %#x", pc, ins.Code)
		}
	}
	// The first instruction loads the architecture: nothing may look at
	// the number before the ABI is known.
	assert.Check(t, is.DeepEqual(prog[0], unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 4}))

	again, err := Build()
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(prog, again), "Build is not deterministic")
}
