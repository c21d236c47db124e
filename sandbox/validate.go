package sandbox

import (
	"fmt"
	"path/filepath"
	"time"

	"sandboxlab/sandbox/egress"
)

// PolicyError is what Policy.Validate found wrong: the field, named as a
// Go expression on the Policy ("Limits.Wall", "Filesystem.Hide[2]"), and
// why. It wraps ErrInvalidPolicy and the cause.
type PolicyError struct {
	Field string
	Err   error
}

func (e *PolicyError) Error() string {
	return ErrInvalidPolicy.Error() + ": " + e.Field + ": " + e.Err.Error()
}

func (e *PolicyError) Unwrap() []error { return []error{ErrInvalidPolicy, e.Err} }

// invalid is a *PolicyError for field.
func invalid(field, format string, args ...any) error {
	return &PolicyError{Field: field, Err: fmt.Errorf(format, args...)}
}

// policyCheck is one named check of Validate: the rules of one layer.
type policyCheck struct {
	name  string
	check func(Policy) error
}

// policyChecks are Validate's checks, layer by layer.
var policyChecks = []policyCheck{
	{"level", checkLevel},
	{"watchdog", checkWatchdog},
	{"limits", checkLimits},
	{"processes", checkProcesses},
	{"network", checkNetwork},
	{"filesystem", checkFilesystem},
	{"hardened", checkHardened},
}

// Validate reports the first thing wrong with p: a *PolicyError, which
// wraps ErrInvalidPolicy.
func (p Policy) Validate() error {
	for _, c := range policyChecks {
		if err := c.check(p); err != nil {
			return err
		}
	}
	return nil
}

// negative is the error for a field below zero, nil for any other.
func negative[T ~int | ~int64](field string, value T) error {
	if value < 0 {
		return invalid(field, "must not be negative, got %v", value)
	}
	return nil
}

// first returns the first error that is not nil.
func first(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func checkLevel(p Policy) error {
	if p.Level < 0 || p.Level >= Levels {
		return invalid("Level", "want 0 to %d, got %d", Levels-1, p.Level)
	}
	return nil
}

func checkWatchdog(p Policy) error {
	return negative("Watchdog", p.Watchdog)
}

func checkLimits(p Policy) error {
	l := p.Limits
	err := first(negative("Limits.Wall", l.Wall), negative("Limits.CPU", l.CPU), negative("Limits.CPUHard", l.CPUHard),
		negative("Limits.AddressSpace", l.AddressSpace), negative("Limits.FileSize", l.FileSize),
		negative("Limits.OpenFiles", l.OpenFiles), negative("Limits.OutputChars", l.OutputChars),
		negative("Limits.OutputHeld", l.OutputHeld))
	if err != nil {
		return err
	}
	switch {
	case l.CPU%time.Second != 0:
		return invalid("Limits.CPU", "CPU limits are whole seconds (RLIMIT_CPU), got %v", l.CPU)
	case l.CPUHard%time.Second != 0:
		return invalid("Limits.CPUHard", "CPU limits are whole seconds (RLIMIT_CPU), got %v", l.CPUHard)
	case l.CPUHard > 0 && l.CPU == 0:
		return invalid("Limits.CPUHard", "a hard CPU limit needs a soft one (Limits.CPU), got %v hard and no soft", l.CPUHard)
	case l.CPUHard > 0 && l.CPUHard <= l.CPU:
		return invalid("Limits.CPUHard", "must be above the soft limit %v, got %v: PID 1 of a PID namespace ignores SIGXCPU", l.CPU, l.CPUHard)
	case l.OutputChars > 0 && l.OutputChars < 200:
		return invalid("Limits.OutputChars", "%d leaves no room for head, tail and marker; want at least 200 (0: everything)", l.OutputChars)
	case l.OutputChars > 0 && l.OutputHeld > 0 && heldBytes(l.OutputChars) > l.OutputHeld:
		return invalid("Limits.OutputHeld", "returning %d characters (Limits.OutputChars) needs %d bytes held, over OutputHeld %d",
			l.OutputChars, heldBytes(l.OutputChars), l.OutputHeld)
	}
	return nil
}

func checkProcesses(p Policy) error {
	pr := p.Processes
	if err := first(negative("Processes.Max", pr.Max), negative("Processes.Interval", pr.Interval)); err != nil {
		return err
	}
	if pr.Max > 0 && pr.Interval == 0 {
		return invalid("Processes.Interval", "a process cap (Processes.Max %d) needs a monitor interval", pr.Max)
	}
	return nil
}

// checkNetwork checks the destinations: each list on its own, so that
// the error names the one at fault, and the credentials against the
// rules, which must let them be sent.
func checkNetwork(p Policy) error {
	n := p.Network
	if len(n.Allow) == 0 && len(n.Deny) == 0 && len(n.Credentials) == 0 && len(n.Resolve) == 0 {
		return nil
	}
	if !n.Isolate {
		return invalid("Network.Isolate", "an allowlist needs the network namespace: without it the program has the host's network and the proxy decides nothing")
	}
	if len(n.Credentials) > 0 && !p.Workspace.ScrubEnv {
		return invalid("Network.Credentials", "credentials need a scrubbed environment (Workspace.ScrubEnv): the caller's environment may hold them")
	}
	for _, c := range []struct {
		field string
		cfg   egress.Config
	}{
		{"Network.Allow", egress.Config{Allow: n.Allow}},
		{"Network.Deny", egress.Config{Deny: n.Deny}},
		{"Network.Resolve", egress.Config{Resolve: n.Resolve}},
		{"Network.Credentials", n.egressConfig()},
	} {
		if err := egress.CheckConfig(c.cfg); err != nil {
			return &PolicyError{Field: c.field, Err: err}
		}
	}
	return nil
}

func checkFilesystem(p Policy) error {
	for _, list := range []struct {
		name  string
		paths []string
	}{{"Filesystem.Hide", p.Filesystem.Hide}, {"Filesystem.Private", p.Filesystem.Private}, {"Filesystem.Expose", p.Filesystem.Expose}} {
		for i, path := range list.paths {
			if !filepath.IsAbs(path) || filepath.Clean(path) == "/" {
				return invalid(fmt.Sprintf("%s[%d]", list.name, i), "want an absolute path other than /, got %q", path)
			}
			if _, err := filepath.Match(path, ""); err != nil && list.name == "Filesystem.Expose" {
				return invalid(fmt.Sprintf("%s[%d]", list.name, i), "a bad pattern %q: %w", path, err)
			}
		}
	}
	return nil
}

func checkHardened(p Policy) error {
	h := p.Hardened
	err := first(negative("Hardened.Cgroup.Memory", h.Cgroup.Memory), negative("Hardened.Cgroup.Pids", h.Cgroup.Pids),
		negative("Hardened.LandlockABI", h.LandlockABI))
	if err != nil {
		return err
	}
	if h.Cgroup.CPUWeight < 0 || h.Cgroup.CPUWeight > 10000 {
		return invalid("Hardened.Cgroup.CPUWeight", "want 1 to 10000 (0: none), got %d", h.Cgroup.CPUWeight)
	}
	if (h.SyscallFilter || h.Landlock) && !p.Filesystem.DropCapabilities && !h.NoNewPrivs {
		return invalid("Hardened.NoNewPrivs", "a system-call filter and Landlock need no_new_privs (Hardened.NoNewPrivs or Filesystem.DropCapabilities)")
	}
	if h.OwnIdentity && (!p.Filesystem.OwnIPC || !p.Processes.Namespace) {
		return invalid("Hardened.OwnIdentity", "an identity of the run's own needs its UTS namespace (Filesystem.OwnIPC) and its own /proc (Processes.Namespace)")
	}
	return nil
}
