// Package evidence is what the host can see of a sandboxed program, read
// from outside the sandbox: the processes tagged with a run's token
// (sampled at an interval while it runs, and the peak of a measure over
// them), a loopback honeypot that records what reaches it, HTTP
// destinations on loopback addresses of their own that record the
// requests reaching them (through the egress proxy or not), fields of
// /proc/PID/status, a process's mounts and its open descriptors, and the
// interpreter the programs run under.
//
// The promise checks and the attack harness judge a run from these, never
// from the program's own word, so each is written once, here.
//
// It may import the standard library, golang.org/x/sys and
// sandboxlab/sandbox/procfs, nothing else: never the harness, the report
// model or a test library (its own tests aside). The sandbox library does
// not import it: it is the observer's side of the wall.
package evidence
