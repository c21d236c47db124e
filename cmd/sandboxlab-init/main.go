// Command sandboxlab-init is the sandbox's init: the first process of a
// run's namespaces, which sets the run's layers up and execs the program
// (or, at L6, stays as its reaper). sandboxlab and sandboxlab-harness
// start it from beside themselves; it links the init's body (package
// boot) and what that needs, and not the rest of the sandbox library
// (its supervisor, egress proxy and their net/http and crypto), so that
// what every run pays before its program starts is the init's own
// set-up. Started any other way, it says what it
// is and exits.
package main

import (
	"fmt"
	"os"

	_ "sandboxlab/sandbox/boot" // the init registers itself (reexec.RegisterEarly)
	"sandboxlab/sandbox/reexec"
)

func main() {
	reexec.Init()
	fmt.Fprintln(os.Stderr, "sandboxlab-init is the sandbox's init; sandboxlab starts it for each run")
	os.Exit(2)
}
