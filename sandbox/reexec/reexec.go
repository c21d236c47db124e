// Package reexec runs this binary again as a helper process: the
// sandbox's in-namespace init, and the probes and workers of the harness.
// Go cannot run code of its own in a forked child before exec, so every
// piece of set-up that must happen inside the child (mounts, privileges,
// limits) happens in a fresh copy of the binary instead, started through
// /proc/self/exe and told by its argv[0] which helper it is.
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
	"sort"
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
	cmd := exec.CommandContext(ctx, "/proc/self/exe", args...)
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
