package sandbox

import (
	"fmt"
	"strings"
)

// Layer is one layer of a policy that can be taken away on its own: to
// test a layer, take the others away, and to find a layer that hides
// another's defect, take each away in turn.
type Layer struct {
	// Name is the layer's stable id, such as cpu_limit.
	Name string
	// Level is the preset that first has the layer.
	Level int
	// on reports whether p has the layer; off takes it away.
	on  func(p Policy) bool
	off func(p *Policy)
}

// On reports whether p has the layer.
func (l Layer) On(p Policy) bool { return l.on(p) }

// Remove takes the layer away from p. The result may not validate (a
// system-call filter needs no_new_privs): a run under it is then refused,
// as any invalid policy is.
func (l Layer) Remove(p *Policy) { l.off(p) }

// Layers lists every layer that can be taken away, by level.
var Layers = []Layer{
	{"wall_clock", 1, func(p Policy) bool { return p.Limits.Wall > 0 }, func(p *Policy) { p.Limits.Wall = 0 }},
	{"cpu_limit", 1, func(p Policy) bool { return p.Limits.CPU > 0 }, func(p *Policy) { p.Limits.CPU, p.Limits.CPUHard = 0, 0 }},
	{"address_space", 1, func(p Policy) bool { return p.Limits.AddressSpace > 0 }, func(p *Policy) { p.Limits.AddressSpace = 0 }},
	{"file_size", 1, func(p Policy) bool { return p.Limits.FileSize > 0 }, func(p *Policy) { p.Limits.FileSize = 0 }},
	{"open_files", 1, func(p Policy) bool { return p.Limits.OpenFiles > 0 }, func(p *Policy) { p.Limits.OpenFiles = 0 }},
	{"output_cap", 1, func(p Policy) bool { return p.Limits.OutputChars > 0 }, func(p *Policy) { p.Limits.OutputChars, p.Limits.OutputHeld = 0, 0 }},
	{"tree_kill", 1, func(p Policy) bool { return p.Limits.KillTree }, func(p *Policy) { p.Limits.KillTree = false }},
	{"sweep", 1, func(p Policy) bool { return p.Limits.Sweep }, func(p *Policy) { p.Limits.Sweep = false }},
	{"scrub_env", 2, func(p Policy) bool { return p.Workspace.ScrubEnv }, func(p *Policy) { p.Workspace.ScrubEnv = false }},
	{"private_workdir", 2, func(p Policy) bool { return p.Workspace.Private }, func(p *Policy) { p.Workspace.Private = false }},
	{"pid_namespace", 3, func(p Policy) bool { return p.Processes.Namespace }, func(p *Policy) { p.Processes.Namespace = false }},
	{"process_monitor", 3, func(p Policy) bool { return p.Processes.Max > 0 }, func(p *Policy) { p.Processes.Max = 0 }},
	{"network_namespace", 4, func(p Policy) bool { return p.Network.Isolate }, func(p *Policy) { p.Network.Isolate = false }},
	{"hidden_paths", 5, func(p Policy) bool { return len(p.Filesystem.Hide) > 0 }, func(p *Policy) { p.Filesystem.Hide = nil }},
	{"private_scratch", 5, func(p Policy) bool { return len(p.Filesystem.Private) > 0 }, func(p *Policy) { p.Filesystem.Private = nil }},
	{"own_ipc", 5, func(p Policy) bool { return p.Filesystem.OwnIPC }, func(p *Policy) { p.Filesystem.OwnIPC = false }},
	{"fresh_keyring", 5, func(p Policy) bool { return p.Filesystem.FreshKeyring }, func(p *Policy) { p.Filesystem.FreshKeyring = false }},
	{"drop_capabilities", 5, func(p Policy) bool { return p.Filesystem.DropCapabilities }, func(p *Policy) { p.Filesystem.DropCapabilities = false }},
	{"allowlist_root", 6, func(p Policy) bool { return len(p.Filesystem.Expose) > 0 }, func(p *Policy) { p.Filesystem.Expose = nil }},
	{"session_store", 6, func(p Policy) bool { return p.Hardened.SessionInodes > 0 }, func(p *Policy) { p.Hardened.SessionInodes = 0 }},
	{"syscall_filter", 6, func(p Policy) bool { return p.Hardened.SyscallFilter }, func(p *Policy) { p.Hardened.SyscallFilter = false }},
	{"landlock", 6, func(p Policy) bool { return p.Hardened.Landlock }, func(p *Policy) { p.Hardened.Landlock = false }},
	{"cgroup_memory", 6, func(p Policy) bool { return p.Hardened.Cgroup.Memory > 0 }, func(p *Policy) { p.Hardened.Cgroup.Memory = 0 }},
	{"cgroup_pids", 6, func(p Policy) bool { return p.Hardened.Cgroup.Pids > 0 }, func(p *Policy) { p.Hardened.Cgroup.Pids = 0 }},
	{"cpu_weight", 6, func(p Policy) bool { return p.Hardened.Cgroup.CPUWeight > 0 }, func(p *Policy) { p.Hardened.Cgroup.CPUWeight = 0 }},
	{"own_identity", 6, func(p Policy) bool { return p.Hardened.OwnIdentity }, func(p *Policy) { p.Hardened.OwnIdentity = false }},
	{"reaper", 6, func(p Policy) bool { return p.Processes.Reaper }, func(p *Policy) { p.Processes.Reaper = false }},
}

// LookupLayer returns the layer named name.
func LookupLayer(name string) (Layer, error) {
	for _, l := range Layers {
		if l.Name == name {
			return l, nil
		}
	}
	names := make([]string, len(Layers))
	for i, l := range Layers {
		names[i] = l.Name
	}
	return Layer{}, fmt.Errorf("unknown layer %q (known: %s)", name, strings.Join(names, ", "))
}

// LayersOn returns the names of the layers p has, in Layers' order.
func LayersOn(p Policy) []string {
	var out []string
	for _, l := range Layers {
		if l.On(p) {
			out = append(out, l.Name)
		}
	}
	return out
}
