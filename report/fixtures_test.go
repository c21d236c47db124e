package report

// Fixed result models for the renderer tests: no sandbox runs, every
// field set by hand, so the golden files change only when a renderer
// does.

import "sandboxlab/verdict"

var rootIdentity = Identity{UID: 0, Root: true, ProgramUID: 65534}

func fixtureChecks() *Checks {
	c := &Checks{Identity: rootIdentity, Checks: []Check{
		{ID: "wall_timeout", Promise: "a runaway loop is stopped at the wall-clock limit", Level: 1, Passed: true, Evidence: "stopped after 1503 ms, reason timeout", MS: 1611},
		{ID: "timeout_flag", Promise: "a stopped run says so (TimedOut), a finished one does not", Level: 1, Passed: false, Evidence: "a run stopped at 1.5 s has TimedOut false | reason timeout\nsecond line", MS: 1702},
		{ID: "exit_status", Promise: "the program's exit status is reported faithfully", Level: 0, Passed: true, Evidence: "exit(0), exit(3), exit(77) and SIGTERM reported as 0, 3, 77, SIGTERM", MS: 86},
		{ID: "names_absolute", Promise: "the file API rejects absolute names", Level: 2, Passed: true, Evidence: `ReadFile and WriteFile of absolute names refused: "/tmp/x/host/secret.txt" is absolute`, MS: 1},
	}}
	c.Tally()
	return c
}

// fixtureAttackList is the attack table of docs/course.md: each attack, the first
// level that stops it, and what stops it there.
var fixtureAttackList = []struct {
	id    string
	first int
	by    string
}{
	{"runaway_loop", 1, "wall clock"},
	{"memory_hog", 1, "address-space limit"},
	{"output_flood", 1, "output cap"},
	{"disk_filler", 1, "file-size limit"},
	{"fd_hoarder", 1, "open-files limit"},
	{"lingering_child", 1, "sweep"},
	{"env_secrets", 2, "scrubbed environment"},
	{"app_dir_overwrite", 2, "private directory"},
	{"fork_bomb", 3, "process monitor"},
	{"detached_daemon", 3, "PID namespace"},
	{"host_process_snoop", 3, "PID namespace"},
	{"exfiltrate", 4, "network namespace"},
	{"read_ssh_key", 5, "hidden path"},
	{"plant_in_home", 5, "hidden path"},
	{"privileged_mount", 5, "no capabilities"},
	{"file_api_symlink", 0, "file API: link refused"},
}

// fixtureAttacks is the full 16x6 matrix of the correct sandbox, with
// the expected first stops when expected is set.
func fixtureAttacks(expected bool) *Attacks {
	a := &Attacks{Identity: rootIdentity, Levels: []int{0, 1, 2, 3, 4, 5}}
	for i, at := range fixtureAttackList {
		a.Attacks = append(a.Attacks, at.id)
		for _, l := range a.Levels {
			c := Cell{Attack: at.id, Level: l, MS: int64(100 + 10*i + l)}
			if l < at.first {
				c.Escaped, c.Evidence = true, "the host saw the attack's evidence at L"+itoa(l)
			} else {
				c.StoppedBy, c.Evidence = at.by, "nothing reached the host"
			}
			a.Cells = append(a.Cells, c)
		}
	}
	if expected {
		a.Expected = map[string]int{}
		for _, at := range fixtureAttackList {
			a.Expected[at.id] = at.first
		}
	}
	a.Summarize()
	return a
}

// fixtureAttacksWithDefect is a two-attack matrix with no_net_ns on:
// exfiltrate escapes where the network namespace should stop it.
func fixtureAttacksWithDefect() *Attacks {
	a := &Attacks{Identity: rootIdentity, Defect: "no_net_ns", Attacks: []string{"exfiltrate", "read_ssh_key"}, Levels: []int{3, 4, 5},
		Expected: map[string]int{"exfiltrate": 4, "read_ssh_key": 5}}
	for _, l := range a.Levels {
		a.Cells = append(a.Cells, Cell{Attack: "exfiltrate", Level: l, Escaped: true, Evidence: "the honeypot received 42 bytes", MS: 310})
	}
	a.Cells = append(a.Cells,
		Cell{Attack: "read_ssh_key", Level: 3, Escaped: true, Evidence: "the fake key's content was in the output", MS: 120},
		Cell{Attack: "read_ssh_key", Level: 4, Escaped: true, Evidence: "the fake key's content was in the output", MS: 121},
		Cell{Attack: "read_ssh_key", Level: 5, StoppedBy: "hidden path", Evidence: "No such file or directory", MS: 122},
	)
	a.Summarize()
	return a
}

func fixtureMutation() *Mutation {
	base := fixtureChecks()
	base.Checks[1].Passed, base.Checks[1].Evidence = true, "a run stopped at 1.5 s has TimedOut true"
	base.Tally()
	m := &Mutation{
		Identity: rootIdentity,
		Baseline: Baseline{OK: true, Problems: []string{}, Checks: base, Attacks: fixtureAttacks(false), Expected: fixtureAttacks(true).Expected, MS: 61234},
		FailOn:   "escape", Gate: "fail", MS: 245678, Jobs: 2,
		Defects: []Defect{
			{ID: "timeout_hidden", Summary: "a run stopped at the wall-clock limit is reported with TimedOut false", Site: "sandbox/run.go",
				FailedChecks: []string{"timeout_flag"}, PredictedChecks: []string{"timeout_flag", "tool_wording"}, Outcome: verdict.TooWide,
				EscapedAttacks: []string{}, PredictedAttacks: []string{}, Unexpected: []string{},
				Known: &Known{Outcome: verdict.TooWide, Why: "the tool words its reply from the stop reason, not from the flag"}, MS: 50123},
			{ID: "exit_code_lost", Summary: "the program's exit status is reported as 0", Site: "sandbox/run.go",
				FailedChecks: []string{"exit_status", "tool_errors"}, PredictedChecks: []string{"exit_status"}, Outcome: verdict.Extra,
				EscapedAttacks: []string{}, PredictedAttacks: []string{}, Unexpected: []string{},
				Known: &Known{Outcome: verdict.Extra, Why: "tool_errors fails too, because the careful tool decides from the exit status whether a run was an error"}, MS: 49001},
			{ID: "traversal_ok", Summary: "the file API's guard against '..' components that leave the directory is gone", Site: "sandbox/files.go",
				FailedChecks: []string{}, PredictedChecks: []string{"names_traversal"}, Outcome: verdict.Escaped,
				EscapedAttacks: []string{}, PredictedAttacks: []string{}, Unexpected: []string{},
				Known: &Known{Outcome: verdict.Escaped, Why: "equivalent mutant; the link guard (openat2 RESOLVE_BENEATH) refuses the same names, so no check can fail"}, MS: 48000},
			{ID: "no_net_ns", Summary: "no network namespace: the program reaches the host's loopback and beyond", Site: "sandbox/run.go",
				FailedChecks: []string{"no_network"}, PredictedChecks: []string{"no_network"}, Outcome: verdict.Exact,
				EscapedAttacks: []string{"exfiltrate@L4", "exfiltrate@L5"}, PredictedAttacks: []string{"exfiltrate@L4", "exfiltrate@L5"}, Unexpected: []string{}, MS: 51000},
			{ID: "caps_kept", Summary: "the capability bounding set and capabilities are kept", Site: "sandbox/init.go",
				FailedChecks: []string{"no_capabilities", "hidden_paths"}, PredictedChecks: []string{"no_capabilities"}, Outcome: verdict.Extra,
				EscapedAttacks: []string{"privileged_mount@L5"}, PredictedAttacks: []string{"privileged_mount@L5"},
				Unexpected: []string{"extra: predicted no_capabilities, failed no_capabilities, hidden_paths"}, MS: 52000,
				Seen: []Seen{{Probe: "hidden_paths", Verdict: verdict.CheckFailed, Evidence: "the program read /root/.ssh/id_ed25519 (with CAP_DAC_OVERRIDE)"}}},
			{ID: "no_pid_ns", Summary: "no PID namespace: the program sees the host's processes and its daemons outlive it", Site: "sandbox/run.go",
				FailedChecks: []string{"no_orphans"}, PredictedChecks: []string{"no_orphans"}, Outcome: verdict.Exact,
				EscapedAttacks:   []string{"detached_daemon@L3", "detached_daemon@L4", "detached_daemon@L5", "host_process_snoop@L3", "host_process_snoop@L5"},
				PredictedAttacks: []string{"detached_daemon@L3", "detached_daemon@L4", "detached_daemon@L5"},
				Unexpected:       []string{"attack cell host_process_snoop@L3 escaped, not predicted", "attack cell host_process_snoop@L5 escaped, not predicted"},
				UnexpectedEscape: true, MS: 53000,
				Seen: []Seen{{Probe: "host_process_snoop@L3", Verdict: verdict.CellEscaped, Evidence: "read the canary's environment from /proc/4242/environ"},
					{Probe: "host_process_snoop@L5", Verdict: verdict.CellEscaped, Evidence: "read the canary's environment from /proc/4242/environ"}}},
			{ID: "quota_ignored", Summary: "the session's disk quota is never checked", Site: "sandbox/session.go",
				FailedChecks: []string{}, PredictedChecks: []string{"disk_quota"}, Outcome: verdict.Escaped,
				EscapedAttacks: []string{}, PredictedAttacks: []string{},
				Unexpected: []string{"escaped: predicted disk_quota, failed none"}, UnexpectedEscape: true, MS: 47000},
			{ID: "fresh_dir_per_run", Summary: "every run gets a new directory, so nothing survives between runs", Site: "sandbox/session.go",
				FailedChecks: []string{}, PredictedChecks: []string{"files_persist"}, Outcome: verdict.Hung,
				EscapedAttacks: []string{}, PredictedAttacks: []string{},
				Unexpected: []string{"no verdict: hung: no verdict within 6m0s"}, UnexpectedEscape: true, Error: "hung: no verdict within 6m0s", MS: 360000},
			{ID: "no_sweep", Summary: "leftover processes of the run's session are not killed after a normal end", Site: "sandbox/run.go",
				FailedChecks: []string{"sweep_leftovers"}, PredictedChecks: []string{"sweep_leftovers"}, Outcome: verdict.Exact,
				EscapedAttacks: []string{"lingering_child@L1", "lingering_child@L2"}, PredictedAttacks: []string{"lingering_child@L1", "lingering_child@L2"}, Unexpected: []string{}, MS: 50500},
		},
	}
	m.Tally()
	return m
}

// fixtureMutationBroken is a run whose baseline failed: no defect ran.
func fixtureMutationBroken() *Mutation {
	base := fixtureChecks()
	m := &Mutation{
		Identity: Identity{UID: 1000, ProgramUID: 1000},
		Baseline: Baseline{OK: false, Checks: base, Attacks: fixtureAttacks(false), Expected: fixtureAttacks(true).Expected, MS: 60000,
			Problems: []string{"check timeout_flag fails on the correct sandbox: " + base.Checks[1].Evidence}},
		Defects: []Defect{}, FailOn: "escape", Gate: "fail", MS: 60001, Jobs: 2,
	}
	m.Tally()
	return m
}

func fixtureAgent() *Agent {
	yes, no := true, false
	a := &Agent{Rows: []AgentRow{
		{Task: "typo", Tool: "careful", Solved: true, Calls: 2, Ended: "answer verified", ExpectSolved: &yes},
		{Task: "typo", Tool: "naive", Solved: false, Calls: 2, Ended: "empty reply, no clue", ExpectSolved: &no},
		{Task: "slow", Tool: "careful", Solved: true, Calls: 2, Ended: "answer verified"},
		{Task: "slow", Tool: "naive", Solved: false, Calls: 2, Ended: "empty reply, no clue"},
		{Task: "state", Tool: "careful", Solved: true, Calls: 4, Ended: "answer verified", Problem: "a variable that | does not survive"},
		{Task: "state", Tool: "naive", Solved: false, Calls: 3, Ended: "empty reply, no clue"},
		// A row that differs from what the notes report, to show a failure.
		{Task: "memory", Tool: "careful", Solved: false, Calls: 6, Ended: "gave up after 6 calls", ExpectSolved: &yes},
		{Task: "memory", Tool: "naive", Solved: false, Calls: 2, Ended: "empty reply, no clue"},
	}}
	a.Vague = AgentRow{Task: "state", Tool: "careful", Solved: false, Calls: 4, Ended: "x lost between calls again; nothing says what survives a call", ExpectSolved: &no}
	return a
}

func fixtureExperiments() Experiments {
	return Experiments{
		{ID: "cpu-quirk", Title: "A CPU limit on PID 1 of a PID namespace", Identity: rootIdentity, Rows: []ExperimentRow{
			{Case: "busy loop, no namespace (L1), CPU 2 s soft / 3 s hard", Outcome: "stopped by the CPU limit after 2.03 s wall", Value: 2, Unit: "s CPU"},
			{Case: "busy loop as PID 1 of a PID namespace (L3), CPU 2 s soft / 3 s hard", Outcome: "stopped by the CPU limit after 3.02 s wall", Value: 3.01, Unit: "s CPU"},
		}, Finding: "The soft limit stopped the loop after 2.00 s of CPU without a namespace; as PID 1 only the hard limit did, after 3.01 s."},
		{ID: "layer-hiding", Title: "One layer hiding another's bug: a timeout that kills only the first process", Identity: rootIdentity, Rows: []ExperimentRow{
			{Case: "kill_leader_only, CPU limit on (2 s soft / 3 s hard)", Outcome: "found 3s after the timeout", Value: 0, Unit: "survivors"},
			{Case: "kill_leader_only, CPU limit off", Outcome: "found 3s after the timeout", Value: 2, Unit: "survivors"},
		}, Finding: "With the CPU limit on, the tree-kill check finds 0 survivors and the defect passes; with it off, 2."},
	}
}

// The two-suite fixtures: the course's members as above, each naming its
// suite, and a made-up hardening suite (a vault that stays sealed) with
// checks, attacks and defects of its own. The attack matrix runs one
// level more than the course has, L6, which the course's matrix must not
// show.

func fixtureSuitesChecks() *Checks {
	c := fixtureChecks()
	for i := range c.Checks {
		c.Checks[i].Suite = verdict.Course
	}
	c.Checks = append(c.Checks,
		Check{ID: "vault_sealed", Suite: verdict.Hardening, Promise: "the vault stays sealed under load", Level: 6, Passed: true, Evidence: "the seal held for 40 tries", MS: 320},
		Check{ID: "vault_logged", Suite: verdict.Hardening, Promise: "every try at the vault is logged", Level: 6, Passed: false, Evidence: "2 of 40 tries missing from the log", MS: 410},
	)
	c.Tally()
	return c
}

// fixtureSuitesAttacks is the course's 16x6 matrix inside a run of L0–L6,
// and two hardening attacks: vault_raid, stopped from L6 as expected, and
// vault_tunnel, expected stopped from L3 and escaping at L5 when correct
// is false.
func fixtureSuitesAttacks(correct bool) *Attacks {
	a := fixtureAttacks(true)
	a.Levels = []int{0, 1, 2, 3, 4, 5, 6}
	a.Suites = map[string]verdict.Suite{}
	for _, at := range a.Attacks {
		a.Suites[at] = verdict.Course
	}
	for i, h := range []struct {
		id    string
		first int
		by    string
	}{{"vault_raid", 6, "vault door"}, {"vault_tunnel", 3, "vault floor"}} {
		a.Attacks = append(a.Attacks, h.id)
		a.Suites[h.id] = verdict.Hardening
		a.Expected[h.id] = h.first
		for _, l := range a.Levels {
			c := Cell{Attack: h.id, Level: l, MS: int64(500 + 10*i + l)}
			if l < h.first || !correct && h.id == "vault_tunnel" && l == 5 {
				c.Escaped, c.Evidence = true, "the vault's canary was read at L"+itoa(l)
			} else {
				c.StoppedBy, c.Evidence = h.by, "the canary is untouched"
			}
			a.Cells = append(a.Cells, c)
		}
	}
	a.Summarize()
	return a
}

// fixtureSuitesMutation is a run of both suites: the course's defects of
// fixtureMutation (whose gate fails) and two hardening defects whose
// results are predicted or known (its gate holds).
func fixtureSuitesMutation() *Mutation {
	m := fixtureMutation()
	checks := fixtureSuitesChecks()
	checks.Checks[1].Passed, checks.Checks[1].Evidence = true, "a run stopped at 1.5 s has TimedOut true"
	checks.Checks[5].Passed, checks.Checks[5].Evidence = true, "all 40 tries logged"
	checks.Tally()
	attacks := fixtureSuitesAttacks(true)
	expected := attacks.Expected
	attacks.Expected = nil
	m.Baseline.Checks, m.Baseline.Attacks, m.Baseline.Expected = checks, attacks, expected
	for i := range m.Defects {
		m.Defects[i].Suite = verdict.Course
	}
	m.Defects = append(m.Defects,
		Defect{ID: "vault_open", Suite: verdict.Hardening, Summary: "the vault's door is left open at L6", Site: "sandbox/vault.go",
			FailedChecks: []string{"vault_sealed"}, PredictedChecks: []string{"vault_sealed"}, Outcome: verdict.Exact,
			EscapedAttacks: []string{"vault_raid@L6"}, PredictedAttacks: []string{"vault_raid@L6"}, Unexpected: []string{}, MS: 30500},
		Defect{ID: "vault_ajar", Suite: verdict.Hardening, Summary: "the vault's door closes a moment late", Site: "sandbox/vault.go",
			FailedChecks: []string{}, PredictedChecks: []string{"vault_logged"}, Outcome: verdict.Escaped,
			EscapedAttacks: []string{}, PredictedAttacks: []string{}, Unexpected: []string{},
			Known: &Known{Outcome: verdict.Escaped, Why: "no check can see a moment's delay"}, MS: 29000},
	)
	m.Suites = []SuiteResult{
		{Suite: verdict.Course, BaselineOK: true, Problems: []string{}, Gate: verdict.Fail},
		{Suite: verdict.Hardening, BaselineOK: true, Problems: []string{}, Gate: verdict.Pass},
	}
	m.Tally()
	return m
}

// fixtureSuitesMutationBroken is fixtureSuitesMutation with the hardening
// suite's baseline broken: its defects were not run; the course's were.
func fixtureSuitesMutationBroken() *Mutation {
	m := fixtureSuitesMutation()
	m.Baseline.Checks.Checks[5].Passed, m.Baseline.Checks.Checks[5].Evidence = false, "2 of 40 tries missing from the log"
	m.Baseline.Checks.Tally()
	problem := "check vault_logged fails on the correct sandbox: 2 of 40 tries missing from the log"
	m.Baseline.OK, m.Baseline.Problems = false, []string{problem}
	m.Defects = m.Defects[:len(m.Defects)-2]
	m.Suites[1] = SuiteResult{Suite: verdict.Hardening, BaselineOK: false, Problems: []string{problem}, Gate: verdict.Fail}
	m.Tally()
	return m
}
