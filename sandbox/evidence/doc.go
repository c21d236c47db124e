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
// It also measures what of the host's kernel a probe needs (Lacks): a
// probe the host cannot give a meaning is not applicable, with the reason.
//
// It may import the standard library, golang.org/x/sys,
// sandboxlab/sandbox/procfs, sandboxlab/sandbox/seccomp (for the kernel's
// 32-bit entry) and the vocabulary, nothing else: never the harness, the report
// model or a test library (its own tests aside). The sandbox library does
// not import it: it is the observer's side of the wall.
package evidence
