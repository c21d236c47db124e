// Package landlock restricts the calling thread with Landlock: read and
// execute beneath some paths, read and write beneath others, nothing
// else of the filesystem; no TCP bind, no TCP connect but to the ports
// named; and, where the kernel
// can, no abstract Unix socket or signal reaching out of the domain.
//
// The sandbox's init calls Restrict on the one thread it execs the
// program from: a Landlock domain belongs to the thread that enforced it
// and is inherited across exec, which is all the program needs. That is
// why this is a few system calls through x/sys rather than go-landlock,
// which enforces on every thread of the process through libpsx and, in a
// cgo build, wraps pthread_create for the whole binary at link time.
//
// It imports the standard library and golang.org/x/sys only.
package landlock

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrUnsupported wraps the refusal to run when the kernel's Landlock ABI
// is older than the caller requires (or Landlock is off).
var ErrUnsupported = errors.New("no Landlock")

// ABI returns the kernel's Landlock ABI version, 0 when Landlock is not
// there or not enabled.
func ABI() int {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0
	}
	return int(v)
}

// Rules is what the restricted thread may still do.
type Rules struct {
	// ReadExec lists paths (directories and files) beneath which files may
	// be read and executed and directories listed.
	ReadExec []string
	// ReadWrite lists paths beneath which everything is allowed: making,
	// writing, removing, renaming. A file gets the rights a file can have.
	ReadWrite []string
	// ConnectTCP lists the TCP ports connect may still reach (ABI 4 and
	// up; below it TCP is not restricted at all). Landlock knows ports,
	// not addresses: a port named here is open on every address the
	// thread can route to, so name only ports that nothing but the
	// sandbox's own listener can hold there.
	ConnectTCP []uint16
}

// Rights of a file, as opposed to a directory's: Landlock refuses the
// others on a rule for a file.
const fileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
	unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

const readExec = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR

// handledFS is every filesystem right ABI abi knows: each one handled is
// denied unless a rule grants it.
func handledFS(abi int) uint64 {
	h := uint64(1<<13 - 1) // ABI 1: execute … make_sym
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return h
}

// rulesetAttr is the ruleset's attributes as far as ABI 6 defines them;
// the kernel takes the size it is given, and later fields stay zero.
type rulesetAttr struct {
	handledFS, handledNet, scoped uint64
}

// Restrict enforces rules on the calling thread and what it execs. It
// refuses, with ErrUnsupported, when the kernel's ABI is below minABI;
// above it, it also denies TCP bind and connect (ABI 4) and scopes
// abstract Unix sockets and signals to the domain (ABI 6). The thread
// must have no_new_privs set, or CAP_SYS_ADMIN in its user namespace.
// It returns the ABI in force.
func Restrict(rules Rules, minABI int) (int, error) {
	abi := ABI()
	if abi < minABI {
		return abi, fmt.Errorf("%w: the kernel's ABI is %d, the policy needs %d (a kernel with Landlock enabled, 5.13 or later, with lsm=landlock)", ErrUnsupported, abi, minABI)
	}
	attr := rulesetAttr{handledFS: handledFS(abi)}
	if abi >= 4 {
		attr.handledNet = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if abi >= 6 {
		attr.scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return abi, fmt.Errorf("creating a Landlock ruleset: %w", e)
	}
	defer unix.Close(int(fd))
	for _, p := range rules.ReadExec {
		if err := addPath(int(fd), p, readExec&attr.handledFS); err != nil {
			return abi, err
		}
	}
	for _, p := range rules.ReadWrite {
		if err := addPath(int(fd), p, attr.handledFS); err != nil {
			return abi, err
		}
	}
	if attr.handledNet != 0 {
		for _, port := range rules.ConnectTCP {
			if err := addConnectPort(int(fd), port); err != nil {
				return abi, err
			}
		}
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); e != 0 {
		return abi, fmt.Errorf("enforcing the Landlock ruleset: %w", e)
	}
	return abi, nil
}

// ruleNetPort is LANDLOCK_RULE_NET_PORT, and netPortAttr the kernel's
// struct landlock_net_port_attr (not in x/sys yet).
const ruleNetPort = 2

type netPortAttr struct {
	allowedAccess uint64
	port          uint64
}

// addConnectPort grants TCP connect to port.
func addConnectPort(ruleset int, port uint16) error {
	rule := netPortAttr{allowedAccess: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, port: uint64(port)}
	if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), ruleNetPort,
		uintptr(unsafe.Pointer(&rule)), 0, 0, 0); e != 0 {
		return fmt.Errorf("adding a Landlock rule for TCP port %d: %w", port, os.NewSyscallError("landlock_add_rule", e))
	}
	return nil
}

// addPath grants rights beneath path; paths that do not exist are
// skipped (a system without /lib64, say).
func addPath(ruleset int, path string, rights uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening %s for a Landlock rule: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("opening %s for a Landlock rule: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights &= fileRights
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(fd)}
	if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&rule)), 0, 0, 0); e != 0 {
		return fmt.Errorf("adding a Landlock rule for %s: %w", path, os.NewSyscallError("landlock_add_rule", e))
	}
	return nil
}
