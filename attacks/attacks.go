// Package attacks runs small attack programs (the course's sixteen, then
// the hardening suite's) through the sandbox at each of its suite's
// levels, and judges every cell from evidence on the host: a canary
// secret in the output, a fixture file changed, bytes at a loopback
// honeypot, a process still alive, a resource count. The program's exit
// status and its own claims never decide a verdict.
//
// A new attack is two files and one line, and touches nothing shared:
//   - programs/<id>.py is the program (Python 3, standard library only,
//     bounded);
//   - <id>.go declares the attack's own state as a type and its spec,
//     <name>Spec (its id, what makes it an escape, the first level
//     expected to stop it, how to make a fresh state for each cell, and
//     how it runs under other sandboxes: see elsewhere in sandboxes.go),
//     and implements judge on the type, with setup, args, watch or
//     beforeRun/afterRun when it needs them (see attack);
//   - its spec goes in its suite's row order below (courseRows for the
//     course's, hardeningRows for any other), which gives it its suite.
//
// The same programs and judges also run under other sandboxes
// (bubblewrap, firejail, gVisor, unshare, a user's command prefix: see
// package backends), side by side with sandboxlab's levels, in the
// attack × sandbox matrix (RunSandboxes, sandboxes.go): backend.go runs
// and judges one cell under a backend, and watch.go finds the program
// among the backend's processes.
//
// What every attack may use is the cell's env: the policy, the token that
// tags its processes, the shared fixtures, the session, what the host saw
// of the program's isolation, the Result and the processes left after the
// run. Fixtures of its own (a canary process, a honeypot) an attack makes
// in setup and hands to the env's cleanup. The harness (env, the shared
// fixtures, the observer, the matrix runner) lives in the other files;
// what the host can see of a program comes from sandbox/evidence.
//
// The package imports the sandbox, sandbox/evidence, sandbox/procfs,
// sandbox/cleanup, attacks/backends and report (with its
// vocabulary, verdict, here named vocab: verdict is a judge's
// decision in this package); never the checks, and never the harness.
package attacks

import (
	"embed"
	"fmt"
	"sort"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/sandbox/procfs"
	vocab "sandboxlab/verdict"
)

//go:embed programs/*.py
var programs embed.FS

// courseRows is the course's row order: docs/course.md's table, grouped by
// the first level that stops each attack. The row orders are the one
// list of the attacks, as checks/registry.go is of the checks: the list
// an attack is in gives it its suite, and each lives in the file named
// after its id.
var courseRows = []*spec{
	runawayLoopSpec, memoryHogSpec, outputFloodSpec, diskFillerSpec, fdHoarderSpec, lingeringChildSpec,
	envSecretsSpec, appDirOverwriteSpec,
	forkBombSpec, detachedDaemonSpec, hostProcessSnoopSpec,
	exfiltrateSpec,
	readSSHKeySpec, plantInHomeSpec, privilegedMountSpec,
	fileAPISymlinkSpec,
}

// hardeningRows is the hardening suite's row order, below the course's.
var hardeningRows = []*spec{
	// L5 keeps its promise.
	leaveHostStateSpec, readOtherSessionSpec, hostSocketSpec, stealKeyringSpec,
	// L6, hardened.
	kernelSurfaceSpec, compatSyscallSpec, writeOutsideSpec, memoryFanoutSpec,
	// L6 denies by default.
	reachHostSocketSpec, changeHostMetadataSpec, unlistedSyscallSpec, diskFloodSpec,
	// L6 shares nothing with the host.
	hostIdentitySpec, aioHogSpec, watchHostSpec,
	// Network by allowlist, through the egress proxy.
	egressLookalikeSpec, egressSmuggleSpec, egressCredentialReadSpec, egressDenyBypassSpec,
}

// attack is one attack's state in one cell: what its program is given
// and what the host saw of it. spec.new makes a fresh one for each cell,
// so nothing of one cell reaches the next.
type attack interface {
	// judge decides the cell from what the host saw. It runs after the
	// run has ended and every tagged process is gone, before the fixtures
	// are removed. A run the sandbox refused (fail closed) is not judged.
	judge(e *env) verdict
}

// An attack implements these too when it needs them.
type (
	// setupper makes fixtures of its own before the session opens (a
	// canary process, a honeypot) and registers their removal with
	// e.onCleanup, which runs whatever happens to the cell.
	setupper interface{ setup(e *env) error }
	// arguer gives its program arguments after the token.
	arguer interface{ args(e *env) []string }
	// watcher samples the host every watchEvery while the program runs,
	// given the time and the program's live processes
	// (evidence.Programs), and returns true once the escape is certain,
	// which ends the run early. It runs on a goroutine of its own; what it
	// records is safe to read in judge.
	watcher interface {
		watch(e *env, now time.Time, procs []procfs.Proc) bool
	}
	// namer is a watcher whose watch only names the layer that stopped
	// the attack (rootWatch): its verdict is judged from the host's own
	// fixtures, so a run whose processes the host never saw is still
	// judged under another sandbox, with no layer named.
	namer interface{ namesOnly() }
	// measurer measures the harness itself around the run: beforeRun just
	// before the run and the host's observers start, afterRun just after
	// they have stopped, before anything else is done.
	measurer interface {
		beforeRun(e *env)
		afterRun(e *env)
	}
)

// spec is one attack, as its suite's row order lists it.
type spec struct {
	id string
	// escapes says in one line what makes it an escape.
	escapes string
	// firstStop is the first level expected to stop it (and every level
	// above) on the correct sandbox: docs/course.md's table.
	firstStop int
	// new returns a fresh state for one cell.
	new func() attack
	// source is the program, from programs/<id>.py (set by index).
	source string
	// suite is the suite whose row order lists the attack (set by
	// index). It runs only at the levels its suite has.
	suite vocab.Suite
	// elsewhere says how the attack runs under another sandbox than
	// sandboxlab's own levels (see sandboxes.go).
	elsewhere elsewhere
	// needs names what of the host's kernel the attack needs to mean
	// anything: where the host lacks it (evidence.Lacks), every cell is
	// not applicable, with the reason, and the program is not run.
	needs vocab.Feature
	// touches, when set, names every layer of the policy (a name of
	// sandbox.Layers) whose loss can change the verdict of a cell; the
	// mutation harness runs a cell under a defect that weakens one other
	// layer only where the cell's coverage says so (see Info.Touches).
	touches []string
	// idleCPU says that the program's CPU is no part of its verdict: it
	// busy-loops only to be a loop that never ends, and is judged by the
	// clock. Its judge runs it at the lowest priority (idle), so that its
	// loop takes only CPU that nothing else wants, and the mutation
	// harness shares the cores with it accordingly (IdleCPU).
	idleCPU bool
	// runsToLimit says that the program runs until a limit, the clock
	// among them, stops it, or leaves something running behind it. Every
	// other attack's program ends by itself within a second, so a run of
	// it stopped at its clock was kept from its work by the machine, and
	// the mutation harness runs the cell once more (ClockStopIsLoad).
	runsToLimit bool
	// escapeByClock says that the judge calls an escape when the sandbox's
	// stop has not come within a margin of when it should have (the wall
	// limit for the runaway loop, the process cap's monitor for the fork
	// bomb). At L1-L5 those stops are timers of the supervisor, a Go
	// process that a loaded machine schedules late: beside two busy
	// loops, L3's kills landed up to 800 ms after the wall limit, past
	// the runaway judge's 300 ms. Such an escape where the
	// correct sandbox stops the attack is one the machine may have made,
	// and the mutation harness runs the cell once more (EscapeMayBeLoad).
	escapeByClock bool
}

// IdleCPU reports whether the attack's program runs at the lowest
// priority, its CPU no part of its verdict (see spec.idleCPU).
func IdleCPU(id string) bool {
	s, ok := registry[id]
	return ok && s.idleCPU
}

// ClockStopIsLoad reports whether a run of the attack's program stopped
// at its clock says more of the machine's load than of the sandbox: its
// program ends by itself (see spec.runsToLimit).
func ClockStopIsLoad(id string) bool {
	s, ok := registry[id]
	return ok && !s.runsToLimit
}

// EscapeMayBeLoad reports whether an escape of the attack at level may be
// the machine's load rather than the sandbox: its judge decides by a
// margin of time (see spec.escapeByClock), at a level expected to stop
// it. A defect that lets the attack through escapes again.
func EscapeMayBeLoad(id string, level int) bool {
	s, ok := registry[id]
	return ok && s.escapeByClock && level >= s.firstStop
}

// idle puts procs at the lowest priority, nice 19: a best effort, since a
// priority the harness may not lower only costs time.
func idle(procs []procfs.Proc) {
	for _, p := range procs {
		unix.Setpriority(unix.PRIO_PROCESS, p.PID, 19)
	}
}

// verdict is a judge's decision on one cell.
type verdict struct {
	escaped bool
	// stoppedBy names the mechanism ("" when escaped).
	stoppedBy string
	// evidence says briefly what the host saw.
	evidence string
}

func escaped(format string, args ...any) verdict {
	return verdict{escaped: true, evidence: fmt.Sprintf(format, args...)}
}

func stopped(by, format string, args ...any) verdict {
	return verdict{stoppedBy: by, evidence: fmt.Sprintf(format, args...)}
}

// registry maps each attack's id to its spec, and order is the matrix's
// row order: the course's attacks, then the hardening suite's. Both are
// made from the row orders as the package's variables are initialised,
// before any init or caller can look an attack up.
var registry, order = index()

// index completes each spec of the row orders with its suite and its
// program, and returns the specs by id and their ids in row order. It
// panics on an id listed twice, a spec without new, and an attack
// without a program.
func index() (map[string]*spec, []string) {
	registry := make(map[string]*spec, len(courseRows)+len(hardeningRows))
	var order []string
	for _, rows := range []struct {
		suite vocab.Suite
		specs []*spec
	}{{vocab.Course, courseRows}, {vocab.Hardening, hardeningRows}} {
		for _, s := range rows.specs {
			if _, dup := registry[s.id]; dup {
				panic("attacks: " + s.id + " listed twice")
			}
			if s.new == nil {
				panic("attacks: " + s.id + " listed without new")
			}
			src, err := programs.ReadFile("programs/" + s.id + ".py")
			if err != nil {
				panic("attacks: " + s.id + " has no program: " + err.Error())
			}
			s.suite = rows.suite
			s.source = string(src)
			registry[s.id] = s
			order = append(order, s.id)
		}
	}
	return registry, order
}

// Info describes one attack.
type Info struct {
	// ID is the attack's stable id; cells are named attack@L<n>.
	ID string `json:"id"`
	// Escapes says what the host must see for the attack to count as escaped.
	Escapes string `json:"escapes"`
	// FirstStop is the first level that stops it on the correct sandbox.
	FirstStop int `json:"first_stop"`
	// Suite is the suite it belongs to: it runs at the levels the suite
	// has, and judges the suite's defects.
	Suite vocab.Suite `json:"suite"`
	// Touches, when set, names every layer of the policy (sandbox.Layers)
	// whose loss can change a cell's verdict: under a defect that weakens
	// one layer only (mutants.Defect.Layer), the mutation harness runs the
	// cell only when it names that layer. Nil: any layer may.
	Touches []string `json:"touches,omitempty"`
}

// All describes every attack, in matrix order: the course's, then the
// hardening suite's.
func All() []Info {
	out := make([]Info, 0, len(order))
	for _, id := range order {
		a := registry[id]
		out = append(out, Info{ID: a.id, Escapes: a.escapes, FirstStop: a.firstStop, Suite: a.suite, Touches: a.touches})
	}
	return out
}

// IDs returns every attack id, in matrix order.
func IDs() []string { return append([]string(nil), order...) }

// Baseline maps each attack to the first level that stops it on the
// correct sandbox (docs/course.md's table; 0 for the file-API attack, which
// every level stops).
func Baseline() map[string]int {
	m := make(map[string]int, len(order))
	for _, id := range order {
		m[id] = registry[id].firstStop
	}
	return m
}

// known reports whether id names an attack.
func known(id string) bool {
	_, ok := registry[id]
	return ok
}

// sortedIDs is IDs sorted by name, for messages.
func sortedIDs() []string {
	ids := IDs()
	sort.Strings(ids)
	return ids
}
