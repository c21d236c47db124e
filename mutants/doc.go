// Package mutants is the switch of the defects planted in the sandbox:
// their ids, their registry (what each does wrong, and the file holding
// its site) and the gate the sandbox consults at each planted site.
//
// Exactly one defect (or none) is active in a process. The harness selects
// it with Enable, from a command-line flag (--defect), and passes it on to
// the sandbox's in-namespace init on that process's command line; it is
// never read from the environment, so a sandboxed program can neither see
// nor set it. Built with the tag nomutants, On is a constant false and the
// compiler removes every planted site: that is the build for embedders.
//
// The sandbox library imports this package, so it imports the standard
// library and verdict only (the suite a defect belongs to is a word
// of that standard-library-only vocabulary). What runs the defects and
// judges them is harness.
package mutants
