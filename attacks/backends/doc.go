// Package backends runs a program under a sandbox other than sandboxlab's
// own levels (bubblewrap, firejail, gVisor, unshare, a user's own command
// prefix), so that the same attack programs can be judged there by the
// same host-side evidence.
//
// A backend is a command prefix: a Profile from a small YAML file (the
// shipped profiles.yaml, extended by a user's file) or "custom:<prefix>"
// from the command line, with placeholders for what differs from run to
// run ({workdir}, {python}, {home}). Resolve turns a name from the command
// line into a Sandbox: one of sandboxlab's levels or a backend.
//
// Start runs one command under a backend and holds it the way sandboxlab
// holds its own runs, since most backends impose no limit of their own: in
// a control group of its own (or, where the machine gives none, a process
// group and the run's token), bounded by the harness's watchdog, and
// killed whole at its end, so that nothing it started outlives the run.
//
// It imports the standard library, golang.org/x/sys, yaml.v3 and the
// sandbox's cgroup, child, procfs and reexec packages; never the attacks,
// the report or the checks. It holds a run the way the sandbox does
// (child: the first process held through its pidfd, unreaped until the
// run is killed; the output drained with a grace).
package backends
