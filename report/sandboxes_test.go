package report

import (
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"sandboxlab/verdict"
)

// fixtureSandboxes is a small attack × sandbox matrix with every kind of
// cell and column: one of sandboxlab's levels, a backend, one run as host
// root, a custom prefix and a sandbox that is not installed; attacks of
// both suites.
func fixtureSandboxes() *Sandboxes {
	s := &Sandboxes{
		Identity: rootIdentity,
		Attacks:  []string{"runaway_loop", "exfiltrate", "read_ssh_key", "file_api_symlink", "kernel_surface"},
		Suites: map[string]verdict.Suite{"runaway_loop": verdict.Course, "exfiltrate": verdict.Course, "read_ssh_key": verdict.Course,
			"file_api_symlink": verdict.Course, "kernel_surface": verdict.Hardening},
		Sandboxes: []Sandbox{
			{Name: "sandboxlab:L5", Spec: "sandboxlab:L5", About: "sandboxlab's own level L5, as the level matrix runs it", MS: 2400},
			{Name: "bubblewrap", Spec: "bubblewrap", About: "bwrap with sandbox-runtime's flags", Command: []string{"bwrap", "--unshare-net", "--"},
				Held: "a control group of its own", WatchdogMS: 8000, StartMS: 21, MS: 2900},
			{Name: "firejail", Spec: "firejail", About: "firejail's default profile", Command: []string{"firejail", "--net=none"},
				HostRoot: true, Held: "a control group of its own", WatchdogMS: 8000, StartMS: 95, MS: 3100},
			{Name: "custom", Spec: "custom:unshare -rn --", About: "a command prefix given on the command line", Command: []string{"unshare", "-rn", "--"},
				Held: "a control group of its own", WatchdogMS: 8000, StartMS: 12, MS: 2000},
			{Name: "gvisor", Spec: "gvisor", About: "runsc do", Command: []string{"runsc", "do", "--"}, Skipped: "runsc is not installed (exec: \"runsc\": executable file not found in $PATH)",
				WatchdogMS: 8000},
		},
	}
	cell := func(at, sb string, st CellState, mech, ev string, ms int64) {
		s.Cells = append(s.Cells, SandboxCell{Attack: at, Sandbox: sb, State: st, Mechanism: mech, Evidence: ev, MS: ms})
	}
	cell("runaway_loop", "sandboxlab:L5", Stopped, "wall clock", "timed out after 1502 ms, nothing left running", 1610)
	cell("exfiltrate", "sandboxlab:L5", Stopped, "network namespace: ENETUNREACH", "the honeypot received nothing (0 connections)", 60)
	cell("read_ssh_key", "sandboxlab:L5", Stopped, "hidden by mount namespace", "the key is not in the output", 55)
	cell("file_api_symlink", "sandboxlab:L5", Stopped, "file API: link refused", "report.txt is a link", 50)
	cell("kernel_surface", "sandboxlab:L5", Escaped, "", "the program held io_uring (pid 41), userfaultfd (pid 41)", 900)
	cell("runaway_loop", "bubblewrap", Escaped, "", "pid 52 still running, not killed, 1800 ms after it started; no limit of the sandbox's own: the harness stopped it", 1900)
	cell("exfiltrate", "bubblewrap", Stopped, "network namespace", "the honeypot received nothing (0 connections); errno 111 (Connection refused)", 40)
	cell("read_ssh_key", "bubblewrap", Stopped, "", "the key is not in the output (FileNotFoundError); it ended: exited 1", 38)
	cell("file_api_symlink", "bubblewrap", NotApplicable, "", "not run: it needs sandboxlab's host-side file API", 0)
	cell("kernel_surface", "bubblewrap", Escaped, "", "the program held io_uring (pid 60)", 880)
	cell("runaway_loop", "firejail", Escaped, "", "pid 70 still running, not killed, 1800 ms after it started", 1950)
	cell("exfiltrate", "firejail", Stopped, "network namespace", "the honeypot received nothing | errno 111\nsecond line", 90)
	cell("read_ssh_key", "firejail", Stopped, "hidden by mount namespace", "the key is not in the output (PermissionError)", 95)
	cell("file_api_symlink", "firejail", NotApplicable, "", "not run: it needs sandboxlab's host-side file API", 0)
	cell("kernel_surface", "firejail", NotApplicable, "", "not run: the program has host root privileges under this sandbox", 0)
	cell("runaway_loop", "custom", Escaped, "", "no limit: stopped by the harness watchdog after 8004 ms", 8010)
	cell("exfiltrate", "custom", Stopped, "network namespace: ENETUNREACH", "the honeypot received nothing (0 connections)", 20)
	cell("read_ssh_key", "custom", Escaped, "", "the output holds the key's content", 22)
	cell("file_api_symlink", "custom", NotApplicable, "", "not run: it needs sandboxlab's host-side file API", 0)
	cell("kernel_surface", "custom", NotApplicable, "", "not judged: the host saw no process of the program under this sandbox", 300)
	return s
}

func TestSandboxesGolden(t *testing.T) {
	for _, f := range Formats {
		t.Run(string(f), func(t *testing.T) {
			golden.Assert(t, render(t, f, fixtureSandboxes()), "sandboxes."+f.Ext()+".golden")
		})
	}
}

// TestSandboxesCarryTheSameFacts: every format has every cell's state,
// and JUnit fails exactly the escapes and skips exactly the n/a cells and
// the cells of a skipped sandbox.
func TestSandboxesCarryTheSameFacts(t *testing.T) {
	s := fixtureSandboxes()
	var back Sandboxes
	assert.NilError(t, json.Unmarshal([]byte(render(t, JSON, s)), &back))
	assert.DeepEqual(t, &back, s)

	var j TestSuites
	assert.NilError(t, xml.Unmarshal([]byte(render(t, JUnit, s)), &j))
	assert.Check(t, is.Len(j.Suites, len(s.Sandboxes)))
	escaped, skipped := 0, 0
	for _, suite := range j.Suites {
		assert.Check(t, is.Len(suite.Cases, len(s.Attacks)), suite.Name)
		for _, c := range suite.Cases {
			switch c.Status() {
			case StatusFailed:
				escaped++
			case StatusSkipped:
				skipped++
			}
		}
	}
	na := 0
	for _, c := range s.Cells {
		if c.State == NotApplicable {
			na++
		}
	}
	assert.Check(t, is.Equal(escaped, s.escapedCount()))
	assert.Check(t, is.Equal(skipped, na+len(s.Attacks)), "n/a cells and every cell of the skipped sandbox")
	assert.Check(t, is.Equal(j.Failures, escaped))

	for _, md := range []bool{false, true} {
		var b strings.Builder
		// Unwrapped, so that a phrase is found on one line.
		assert.NilError(t, s.Tables(&widthWriter{Writer: &b, width: 1 << 20}, md))
		for _, c := range s.Cells {
			assert.Check(t, strings.Contains(b.String(), c.Attack+": "+string(c.State)), "the evidence of %s is missing (md %v)", c.Name(), md)
		}
		assert.Check(t, strings.Contains(b.String(), "skipped: runsc is not installed"))
	}
	n := s.Count("firejail")
	assert.Check(t, is.DeepEqual(n, Count{Stopped: 2, Escaped: 1, NotApplicable: 2}))
}
