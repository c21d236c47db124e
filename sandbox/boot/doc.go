// Package boot is the sandbox's init: what runs in a run's namespaces
// from the init's exec to the program's. It decodes the Config its
// caller (package sandbox) wrote, takes the set-up steps in order
// (mounts, the allowlist root, the run's identity, keyring, capabilities,
// no_new_privs, Landlock, the system-call filter, the control group,
// resource limits) and execs the program, or, at L6, stays as the
// program's reaper. It reports a failure, or the program's end, in one
// Record on its error pipe.
//
// It is a package of its own so that the init's binary
// (cmd/sandboxlab-init) links only this and what it calls: not the
// supervisor, the egress proxy or their network and TLS code, whose
// initialisers and pages every run's init would otherwise pay for before
// its program starts (TestInitBinaryDeps holds it to that). Nothing here
// imports package sandbox; sandbox imports this.
package boot
