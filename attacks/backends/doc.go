// Package backends runs a program under a sandbox other than sandboxlab's
// own levels (bubblewrap, firejail, gVisor, unshare, containers, a virtual
// machine, a user's own command prefix), so that the same attack programs
// can be judged there by the same host-side evidence.
//
// A backend is a Profile from a small YAML file (the shipped
// profiles.yaml, extended by a user's file) or "custom:<prefix>" from the
// command line: a command with placeholders for what differs from run to
// run ({workdir}, {python}, {home}). Most are a command prefix the
// program's command follows. A profile's driver runs the others, with
// what the harness makes for each run and removes after it: podman (a
// root directory, a state directory, a name; rootless as a throw-away
// user), runc (a bundle whose spec is runc's own default with the program
// in it) and qemu (a guest per run: Debian's kernel, an initrd of this
// binary as init, see package guest, and a job directory for argv, output
// and exit status). Resolve turns a name from the command line into a
// Sandbox: one of sandboxlab's levels or a backend.
//
// OpenColumn readies a profile for a column of runs (its executable, the
// identities it starts as and runs the program as, what its driver
// shares: a throw-away user, a guest's kernel and initrd); Prepare makes
// one run; Start runs it and holds it the way sandboxlab holds its own
// runs, since most backends impose no limit of their own: in a control
// group of its own (or, where the machine gives none, a process group and
// the run's token), bounded by the harness's watchdog, and killed whole at
// its end, so that nothing it started outlives the run.
//
// It imports the standard library, golang.org/x/sys, yaml.v3, its guest
// package and the sandbox's cgroup, child, cleanup, procfs and reexec
// packages; never the attacks, the report or the checks. It holds a run
// the way the sandbox does (child: the first process held through its
// pidfd, unreaped until the run is killed; the output drained with a
// grace).
package backends
