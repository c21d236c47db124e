// Package sandbox runs a program (the code an AI agent writes) under
// cumulative layers of isolation and reports honestly how it ended.
//
// A Policy has one field per layer; Preset(n) switches on levels 0..n:
// L0 bare (a watchdog), L1 limits, L2 environment and working directory,
// L3 processes, L4 network, L5 filesystem and capabilities. A Session is
// one conversation's private directory with a disk quota and a run count;
// Session.Run runs one Command and returns a Result (why it ended, exit
// status, output cut to a budget, times, the files left). The host-side
// file API (Session.ReadFile and friends) never follows a link the
// program made and reads only regular files.
//
// From L1 up the program is started through an in-namespace init (package
// boot; see package reexec), which mounts, drops privileges, sets limits
// and execs the program: sandboxlab-init beside the calling binary, or
// else this binary re-executed. The init takes the process over from
// boot's initialiser (reexec.RegisterEarly), before main and the packages
// initialised after it; a program that embeds the sandbox still calls
// reexec.Init first thing in main, for the other helpers.
// From L4 up a policy may name destinations (Network.Allow): the program
// then reaches them, and only them, through the egress proxy (package
// egress), which runs in the calling process and logs every request into
// the Result. When the isolation a policy asks for cannot be had, Run
// returns ErrUnavailable and runs nothing; when the init fails, it says
// how in an *InitError (the step, the errno), which is ErrUnavailable for
// a failed set-up and os/exec's error for a program that cannot be
// executed. Policy.Validate's errors are *PolicyError, naming the field.
//
// The flow is one way: Policy → Run → Result; judging a Result (checks,
// attacks, the mutation harness) and rendering it (report) happen in
// packages that import this one, never the other way round. The library
// (this package and those below it) imports the standard library,
// golang.org/x/sys and the switch of the planted defects (mutants, which
// is consulted only at the planted sites and compiled away with
// -tags nomutants); TestLibraryDeps keeps it so.
package sandbox
