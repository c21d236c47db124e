package backends

import (
	"fmt"
	"os"
	"syscall"

	"sandboxlab/sandbox/reexec"
)

// gateHelper is the helper a backend starts as on cgroup v1: it waits
// until the harness has put it into the run's control group, then execs
// the backend, so that the backend's first instruction already runs in
// the group.
const gateHelper = "sandboxlab-backend-gate"

// gateFD is where the helper finds the gate (the first of ExtraFiles).
const gateFD = 3

func init() { reexec.Register(gateHelper, gate) }

// gate is the helper's body: args is the backend's command. A closed gate
// (no byte written: the harness could not add it to the group) means the
// run is refused.
func gate(args []string) int {
	f := os.NewFile(gateFD, "cgroup-gate")
	var b [1]byte
	n, _ := f.Read(b[:])
	f.Close()
	if n != 1 {
		fmt.Fprintln(os.Stderr, "sandboxlab: the run's control group was not joined: the backend is not started")
		return 125
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "sandboxlab: no backend command")
		return 125
	}
	err := syscall.Exec(args[0], args, os.Environ())
	fmt.Fprintf(os.Stderr, "sandboxlab: running %s: %v\n", args[0], err)
	return 127
}
