// Package report is the result model of sandboxlab (the checks, the attack
// matrix, the attack × sandbox matrix, the mutation run, the agent table
// and the experiments) and its renderers: tables for a terminal (fitted to
// its width) and for markdown, JSON, JUnit XML, GitHub annotations,
// Stryker's mutation-testing JSON and one self-contained HTML page (the
// attack heat map; for a mutation report the mutation-testing-elements
// component, vendored in third_party/). Producers fill these structs;
// renderers only read them, so every format carries the same facts. A
// report holds the members of one suite or several (the course's, then the
// hardening suite's): each member names its suite, and each renderer shows
// the course's part exactly as a report of the course alone, then each
// other suite's part under its name (see suites.go).
//
// It is the last step of the flow Policy → Run → Result → verdict →
// report. It may import the standard library, verdict and the
// table renderer; never the sandbox, the checks, the attacks or the
// harness, which import it.
package report
