// Package reexec runs this binary again as a helper process: the
// sandbox's in-namespace init, and the probes and workers of the harness.
// Go cannot run code of its own in a forked child before exec, so every
// piece of set-up that must happen inside the child (mounts, privileges,
// limits) happens in a fresh copy of the binary instead, started through
// /proc/self/exe and told by its argv[0] which helper it is; or in a
// binary of the helper's name shipped beside this one (Path).
//
// A program that embeds the sandbox must call Init first thing in main,
// as runc's users call libcontainer.Init:
//
//	func main() {
//		reexec.Init()
//		…
//	}
//
// Helpers register themselves (Register) from their package's init
// function; only a helper registered with RegisterEarly takes the
// process over before Init is called.
//
// It imports the standard library only.
package reexec

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
)

// Main is a helper's body. It gets the arguments after argv[0] and
// returns the process's exit status.
type Main func(args []string) int

var registry = map[string]Main{}

// Register records main as the helper run when this binary starts with
// argv[0] == name. Names must be unique; a clash is a programming error
// and panics.
func Register(name string, main Main) {
	if _, dup := registry[name]; dup {
		panic("reexec: helper " + name + " registered twice")
	}
	registry[name] = main
}

// RegisterEarly is Register for a helper whose start-up cost matters,
// such as the sandbox's init, which every run starts: when this process
// is that helper, main runs at once, from the registering package's
// initialiser, and the process exits with its status. The packages that
// Go initialises after that one, and main, never run in the helper.
//
// Go initialises packages in import-path order, each as soon as what it
// imports is ready, so the helper still pays for the packages whose paths
// sort before the registering package's; it saves the rest.
func RegisterEarly(name string, main Main) {
	Register(name, main)
	if len(os.Args) > 0 && os.Args[0] == name {
		os.Exit(main(os.Args[1:]))
	}
}

// Init runs the helper that os.Args[0] names, if any, and exits with its
// status. It returns only when this process is not a helper.
func Init() {
	if main, ok := registry[os.Args[0]]; ok {
		os.Exit(main(os.Args[1:]))
	}
}

// Path is the executable that serves as the helper name: a binary of
// that name beside this process's own, shipped with it (the sandbox's
// init, sandboxlab-init, which links less than the programs that start
// it, so that it starts sooner), or else this binary again.
//
// The sibling is named through a descriptor this process holds
// (/proc/self/fd/N), as this binary is through /proc/self/exe: exec then
// needs no search permission on the directories above it, which the
// helper's identity (an unprivileged uid inside a user namespace) may
// lack, as under /root.
//
// files is how many descriptors the child is given (stdin to stderr and
// its ExtraFiles): a sibling held where the child's start moves its files
// would be closed over before the exec, so then this binary is used.
func Path(name string, files int) string {
	// The child's start dups each file to its slot, moving those in the
	// way above the highest slot first: up to twice as many descriptors.
	if 2*files >= siblingMinFD {
		return "/proc/self/exe"
	}
	if fd := sibling(name); fd >= 0 {
		return "/proc/self/fd/" + strconv.Itoa(fd)
	}
	return "/proc/self/exe"
}

// siblingMinFD is the lowest descriptor a sibling is held at: above the
// ones a child's start moves its files to, and below 64, the size of a
// process's first descriptor table. A descriptor beyond the table makes
// the kernel grow it, and in a process with threads growing it waits for
// an RCU grace period: 12 ms, measured, more than the whole run.
const siblingMinFD = 40

// siblings caches what sibling found, by name: an executable's
// directory does not change under it.
var siblings sync.Map

// sibling is a close-on-exec descriptor of the executable file named
// name beside this process's executable, or -1 when there is none.
func sibling(name string) int {
	if fd, ok := siblings.Load(name); ok {
		return fd.(int)
	}
	fd := -1
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 && p != self {
			fd = holdAbove(p, siblingMinFD)
		}
	}
	if prev, loaded := siblings.LoadOrStore(name, fd); loaded {
		if fd >= 0 {
			syscall.Close(fd)
		}
		return prev.(int)
	}
	return fd
}

// oPath is Linux's O_PATH, which package syscall does not name.
const oPath = 0o10000000

// holdAbove opens path (O_PATH) at a descriptor of at least min, or
// returns -1.
func holdAbove(path string, min int) int {
	fd, err := syscall.Open(path, oPath|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	high, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, uintptr(min))
	syscall.Close(fd)
	if errno != 0 {
		return -1
	}
	return int(high)
}

// Command returns a command that runs this binary as the helper name
// with args.
func Command(name string, args ...string) *exec.Cmd {
	return CommandContext(context.Background(), name, args...)
}

// CommandContext is Command with a context, as exec.CommandContext: the
// helper is killed when ctx is done.
func CommandContext(ctx context.Context, name string, args ...string) *exec.Cmd {
	if _, ok := registry[name]; !ok {
		panic(fmt.Sprintf("reexec: no helper %q (registered: %v)", name, Names()))
	}
	cmd := exec.CommandContext(ctx, Path(name, 3), args...)
	cmd.Args[0] = name
	return cmd
}

// Names lists the registered helpers, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
