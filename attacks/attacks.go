// Package attacks runs sixteen small attack programs through the sandbox
// at each of its six levels and judges every cell from evidence on the
// host: a canary secret in the output, a fixture file changed, bytes at a
// loopback honeypot, a process still alive, a resource count. The
// program's exit status and its own claims never decide a verdict.
//
// Each attack is found by its id in one hop: programs/<id>.py is the
// program (Python 3, standard library only, bounded), <id>.go registers it
// with what makes it an escape, the first level expected to stop it and
// its judge. The harness (fixtures, honeypot, canary, samplers, the matrix
// runner) lives in the other files.
package attacks

import (
	"embed"
	"fmt"
	"sort"
	"time"

	"sandboxlab/sandbox/procfs"
)

//go:embed programs/*.py
var programs embed.FS

// order is the matrix's row order: DESIGN.md's table, grouped by the first
// level that stops each attack.
var order = []string{
	"runaway_loop", "memory_hog", "output_flood", "disk_filler", "fd_hoarder", "lingering_child",
	"env_secrets", "app_dir_overwrite",
	"fork_bomb", "detached_daemon", "host_process_snoop",
	"exfiltrate",
	"read_ssh_key", "plant_in_home", "privileged_mount",
	"file_api_symlink",
}

// attack is one attack program and how the host judges it.
type attack struct {
	id string
	// escapes says in one line what makes it an escape.
	escapes string
	// firstStop is the first level expected to stop it (and every level
	// above) on the correct sandbox: DESIGN.md's table.
	firstStop int
	// needs names the host-side fixtures made only for this attack.
	needs needs
	// args returns the program's arguments after the token (nil: none).
	args func(t *trial) []string
	// watch, when set, is called every watchEvery while the program runs,
	// with the program's live processes. It samples the host's evidence
	// into t and returns true once the escape is certain, which ends the
	// run early.
	watch func(t *trial, now time.Time, procs []procfs.Proc) bool
	// judge decides the cell from what the host saw. It runs after the
	// run has ended and every tagged process is gone, before the fixtures
	// are removed.
	judge func(t *trial) verdict
	// source is the program, from programs/<id>.py.
	source string
}

// needs is a set of optional fixtures.
type needs uint8

const (
	needCanary   needs = 1 << iota // a host process with a secret in its environment
	needHoneypot                   // a TCP listener on loopback that records what it gets
)

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

var registry = map[string]*attack{}

// register adds an attack; each <id>.go calls it from init.
func register(a attack) {
	if _, dup := registry[a.id]; dup {
		panic("attacks: " + a.id + " registered twice")
	}
	src, err := programs.ReadFile("programs/" + a.id + ".py")
	if err != nil {
		panic("attacks: " + a.id + " has no program: " + err.Error())
	}
	a.source = string(src)
	registry[a.id] = &a
}

// Info describes one attack.
type Info struct {
	// ID is the attack's stable id (DESIGN.md); cells are named attack@L<n>.
	ID string `json:"id"`
	// Escapes says what the host must see for the attack to count as escaped.
	Escapes string `json:"escapes"`
	// FirstStop is the first level that stops it on the correct sandbox.
	FirstStop int `json:"first_stop"`
}

// All describes every attack, in matrix order.
func All() []Info {
	out := make([]Info, 0, len(order))
	for _, id := range order {
		a := registry[id]
		out = append(out, Info{ID: a.id, Escapes: a.escapes, FirstStop: a.firstStop})
	}
	return out
}

// IDs returns every attack id, in matrix order.
func IDs() []string { return append([]string(nil), order...) }

// Baseline maps each attack to the first level that stops it on the
// correct sandbox (DESIGN.md's table; 0 for the file-API attack, which
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
