package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// SARIF 2.1.0 (the OASIS standard GitHub code scanning reads), written
// from 'attack --sandbox' (a result per escaped cell) and 'mutate
// --sandbox' (the same for the unmutated profile, and a result per
// survived flag), each located at the profile's line in its file. The
// schema is vendored in third_party/sarif-schema and the tests validate
// every report against it.

// SARIFLog is the root of a SARIF file.
type SARIFLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []SARIFRun `json:"runs"`
}

// SARIFRun is one tool's run.
type SARIFRun struct {
	Tool              SARIFTool        `json:"tool"`
	AutomationDetails *SARIFAutomation `json:"automationDetails,omitempty"`
	ColumnKind        string           `json:"columnKind"`
	Results           []SARIFResult    `json:"results"`
	Properties        map[string]any   `json:"properties,omitempty"`
}

// SARIFTool names the tool and its rules.
type SARIFTool struct {
	Driver SARIFDriver `json:"driver"`
}

// SARIFDriver is sandboxlab, and its rules.
type SARIFDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []SARIFRule `json:"rules"`
}

// SARIFRule is one attack of the battery, or the survived-flag rule.
type SARIFRule struct {
	ID                   string          `json:"id"`
	Name                 string          `json:"name,omitempty"`
	ShortDescription     SARIFText       `json:"shortDescription"`
	FullDescription      SARIFText       `json:"fullDescription"`
	Help                 *SARIFText      `json:"help,omitempty"`
	DefaultConfiguration SARIFRuleConfig `json:"defaultConfiguration"`
	Properties           SARIFRuleProps  `json:"properties"`
}

// SARIFText is a message: text, and markdown where it has some.
type SARIFText struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

// SARIFRuleConfig is a rule's default level.
type SARIFRuleConfig struct {
	Level string `json:"level"`
}

// SARIFRuleProps are the properties GitHub reads: security-severity (a
// number from 0 to 10, as a string) makes an alert a security alert of
// that severity; tags and precision file it.
type SARIFRuleProps struct {
	SecuritySeverity string   `json:"security-severity,omitempty"`
	Tags             []string `json:"tags"`
	Precision        string   `json:"precision"`
	Class            string   `json:"sandboxlab-class,omitempty"`
	Why              string   `json:"sandboxlab-severity-reason,omitempty"`
}

// SARIFResult is one finding: an escaped cell, or a survived flag.
type SARIFResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             SARIFText         `json:"message"`
	Locations           []SARIFLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          map[string]any    `json:"properties,omitempty"`
}

// SARIFLocation is a place in a file.
type SARIFLocation struct {
	PhysicalLocation SARIFPhysical `json:"physicalLocation"`
}

// SARIFPhysical is a file and a region of it.
type SARIFPhysical struct {
	ArtifactLocation SARIFArtifactLocation `json:"artifactLocation"`
	Region           *SARIFRegion          `json:"region,omitempty"`
}

// SARIFArtifactLocation names a file, relative to the repository root.
type SARIFArtifactLocation struct {
	URI string `json:"uri"`
}

// SARIFRegion is lines and columns from 1, columns in UTF-16 code units
// (SARIF's default), the end column exclusive.
type SARIFRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
	EndLine     int `json:"endLine,omitempty"`
	EndColumn   int `json:"endColumn,omitempty"`
}

// SARIFAutomation identifies the analysis, so that code scanning keeps
// the results of one sandbox's run apart from another's.
type SARIFAutomation struct {
	ID string `json:"id"`
}

// SARIFSchemaURI is the schema a SARIF file names (GitHub accepts it).
const SARIFSchemaURI = "https://json.schemastore.org/sarif-2.1.0.json"

// AttackClass is a kind of escape, and the security-severity GitHub
// gives its alerts: a CVSS-like score from 0 to 10 (GitHub files 9.0 and
// up as critical, 7.0 high, 4.0 medium, below that low).
type AttackClass struct {
	Name     string
	Severity float64
	// Why justifies the score.
	Why string
}

// The classes of escape, by what an agent's code gains on the host.
var (
	hostWrite = AttackClass{"host-write", 8.5, "the program changes the user's own files outside its sandbox (the application's directory, " +
		"the home's dotfiles, any file of the user's): tampering and persistence that outlive the run, such as a line in .bashrc that " +
		"runs at the user's next login with all of the user's rights"}
	secretRead = AttackClass{"secret-read", 8.0, "the program reads a secret the user holds (an SSH key, an API key, a keyring " +
		"payload, another process's environment, a host file through the file API): credential theft, which turns the agent's " +
		"sandbox into the user's accounts"}
	exfiltration = AttackClass{"exfiltration", 7.5, "the program's bytes leave the sandbox over the network (to a host listener, a " +
		"lookalike or a denied destination): data leaves, commands can come in; it needs something worth sending, which the " +
		"secret-read class is about"}
	crossBoundary = AttackClass{"cross-boundary", 7.0, "the program reaches what is not its own on the same host (another session's " +
		"files, a host service's socket, which acts on its bytes with the service's rights): one user's agent touching another's"}
	kernelSurface = AttackClass{"kernel-surface", 6.0, "the program gains kernel interfaces where privilege-escalation exploits " +
		"live (mounting in a namespace of its own, io_uring, userfaultfd): no escape by itself, a larger surface for one"}
	outlivesRun = AttackClass{"outlives-run", 5.0, "something of the run outlives it on the host (a process that goes on working " +
		"unwatched after the call returned, state left in shared directories or IPC): the sandbox's end is not the program's"}
	exhaustion = AttackClass{"exhaustion", 4.0, "the program exhausts a host resource (CPU time, memory, disk, descriptors, " +
		"processes, the harness's memory through output): denial of service to the host and its other users, bounded and with " +
		"nothing read or changed"}
	hostView = AttackClass{"host-view", 3.0, "the program learns about the host beyond its sandbox (its name, its boot, the " +
		"kernel's command line, the locks and files other processes hold and use): nothing of the user's read or changed, but " +
		"runs become linkable to one machine, an exploit learns where it is, and the host's activity leaks"}
	unclassified = AttackClass{"unclassified", 5.0, "not yet classified: a medium default until its class is chosen"}
)

// attackClasses files each attack of the battery under its class.
var attackClasses = map[string]AttackClass{
	"runaway_loop": exhaustion, "memory_hog": exhaustion, "output_flood": exhaustion, "disk_filler": exhaustion,
	"fd_hoarder": exhaustion, "fork_bomb": exhaustion, "memory_fanout": exhaustion,
	"lingering_child": outlivesRun, "detached_daemon": outlivesRun, "leave_host_state": outlivesRun,
	"env_secrets": secretRead, "read_ssh_key": secretRead, "host_process_snoop": secretRead, "steal_keyring": secretRead,
	"egress_credential_read": secretRead, "file_api_symlink": secretRead,
	"app_dir_overwrite": hostWrite, "plant_in_home": hostWrite, "write_outside": hostWrite, "compat_syscall": hostWrite,
	"exfiltrate": exfiltration, "egress_lookalike": exfiltration, "egress_smuggle": exfiltration,
	"read_other_session": crossBoundary, "host_socket": crossBoundary,
	"privileged_mount": kernelSurface, "kernel_surface": kernelSurface, "unlisted_syscall": kernelSurface,
	"reach_host_socket": crossBoundary, "change_host_metadata": hostWrite, "disk_flood": exhaustion,
	"host_identity": hostView, "aio_hog": exhaustion, "watch_host": hostView,
	"egress_deny_bypass": exfiltration,
}

// ClassOf returns the class of attack (unclassified when it has none:
// a test holds every attack to having one).
func ClassOf(attack string) (AttackClass, bool) {
	c, ok := attackClasses[attack]
	if !ok {
		return unclassified, false
	}
	return c, true
}

// sarifLevel is the level of an alert of the given severity.
func sarifLevel(severity float64) string {
	switch {
	case severity >= 7:
		return "error"
	case severity >= 4:
		return "warning"
	}
	return "note"
}

// SurvivedRule is the rule of a flag no attack notices.
const SurvivedRule = "sandbox-flag-survived"

// sarifRules is one rule per attack (in the order given), then the
// survived-flag rule when flags is set; and each rule's index.
func sarifRules(attacks []string, escapes map[string]string, flags bool) ([]SARIFRule, map[string]int) {
	var rules []SARIFRule
	index := map[string]int{}
	for _, a := range attacks {
		if _, dup := index[a]; dup {
			continue
		}
		c, _ := ClassOf(a)
		what := escapes[a]
		if what == "" {
			what = "the host saw the attack's evidence"
		}
		sev := strconv.FormatFloat(c.Severity, 'f', 1, 64)
		index[a] = len(rules)
		rules = append(rules, SARIFRule{ID: a, Name: a,
			ShortDescription: SARIFText{Text: "Attack " + a + " gets through the sandbox"},
			FullDescription:  SARIFText{Text: "The attack program " + a + " escapes when " + what + "."},
			Help: &SARIFText{Text: "Class " + c.Name + " (security-severity " + sev + "): " + c.Why + ".",
				Markdown: "**" + c.Name + "**, security-severity " + sev + ": " + c.Why + ".\n\nJudged by evidence on the host, never by the program's word: " + what + "."},
			DefaultConfiguration: SARIFRuleConfig{Level: sarifLevel(c.Severity)},
			Properties: SARIFRuleProps{SecuritySeverity: sev, Tags: []string{"security", "sandbox", c.Name}, Precision: "high",
				Class: c.Name, Why: c.Why}})
	}
	if flags {
		index[SurvivedRule] = len(rules)
		rules = append(rules, SARIFRule{ID: SurvivedRule, Name: "SandboxFlagSurvived",
			ShortDescription: SARIFText{Text: "A flag of the sandbox's profile that no attack of the battery notices"},
			FullDescription: SARIFText{Text: "Without this flag (or with it weakened) every attack the profile stops is still stopped: " +
				"either no attack tests what it guards, or another flag guards the same thing (mutate --pairs tells which)."},
			Help: &SARIFText{Text: "A survived flag is a gap in what the battery proves, not an escape: keep the flag if it guards " +
				"something, and add an attack that shows what; or drop it if nothing needs it."},
			DefaultConfiguration: SARIFRuleConfig{Level: "note"},
			Properties:           SARIFRuleProps{Tags: []string{"sandbox", "mutation-testing"}, Precision: "high"}})
	}
	return rules, index
}

// fingerprint is a stable digest of parts: it follows what a result is
// about (the profile, the attack, the flag's words and operator), not
// where the file has it, so that an alert survives edits elsewhere.
func fingerprint(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:16])
}

// sarifLocation is where a result is: the span in file, or the file's
// first line when the span is unknown.
func sarifLocation(file string, at *SourceSpan) []SARIFLocation {
	r := &SARIFRegion{StartLine: 1}
	if !at.IsZero() {
		r = &SARIFRegion{StartLine: at.StartLine, StartColumn: at.StartColumn, EndLine: at.EndLine, EndColumn: at.EndColumn}
	}
	return []SARIFLocation{{PhysicalLocation: SARIFPhysical{ArtifactLocation: SARIFArtifactLocation{URI: file}, Region: r}}}
}

// cellResult is an escaped cell under a profile as a result.
func cellResult(c SandboxCell, profile, column string, src *ProfileSource, index map[string]int) SARIFResult {
	cls, _ := ClassOf(c.Attack)
	return SARIFResult{RuleID: c.Attack, RuleIndex: index[c.Attack], Level: sarifLevel(cls.Severity),
		Message:             SARIFText{Text: fmt.Sprintf("%s escaped under the sandbox %s: %s", c.Attack, column, c.Evidence)},
		Locations:           sarifLocation(src.File, src.Command),
		PartialFingerprints: map[string]string{"sandboxlabEscape/v1": fingerprint(profile, c.Attack)},
		Properties:          map[string]any{"sandbox": column, "attack": c.Attack, "class": cls.Name}}
}

// newSARIF is a log of one run by sandboxlab.
func newSARIF(version, automation string, rules []SARIFRule, results []SARIFResult, props map[string]any) *SARIFLog {
	if version == "" {
		version = "unknown"
	}
	if results == nil {
		results = []SARIFResult{}
	}
	return &SARIFLog{Schema: SARIFSchemaURI, Version: "2.1.0", Runs: []SARIFRun{{
		Tool:              SARIFTool{Driver: SARIFDriver{Name: "sandboxlab", Version: version, Rules: rules}},
		AutomationDetails: &SARIFAutomation{ID: automation},
		ColumnKind:        "utf16CodeUnits",
		Results:           results, Properties: props}}}
}

// SARIF is the attack × sandbox matrix as SARIF: a result per escaped
// cell of each backend whose profile's file is known (Sandbox.Source),
// at its command. sandboxlab's own levels are no profile: their escapes
// are the level matrix's business, and get no result.
func (s *Sandboxes) SARIF(o Options) *SARIFLog {
	rules, index := sarifRules(s.Attacks, s.Escapes, false)
	var results []SARIFResult
	var names []string
	for _, sb := range s.Sandboxes {
		if sb.Source == nil {
			continue
		}
		names = append(names, sb.Name)
		for _, c := range s.Cells {
			if c.Sandbox == sb.Name && c.State == Escaped {
				results = append(results, cellResult(c, sb.Name, sb.Name, sb.Source, index))
			}
		}
	}
	sort.Strings(names)
	return newSARIF(o.Version, "sandboxlab/attack-sandbox/"+strings.Join(names, "+")+"/", rules, results,
		map[string]any{"sandboxes": names})
}

// SARIF is the flag mutation as SARIF: a result per attack the
// unmutated profile lets through, at its command, and one per survived
// flag, at the flag.
func (f *FlagMutation) SARIF(o Options) *SARIFLog {
	var attacks []string
	for _, c := range f.Baseline.Cells {
		attacks = append(attacks, c.Attack)
	}
	rules, index := sarifRules(attacks, f.Escapes, true)
	src := f.Source
	if src == nil {
		src = &ProfileSource{File: "profile-" + f.Profile}
	}
	var results []SARIFResult
	for _, c := range f.Baseline.Cells {
		if c.State == Escaped {
			results = append(results, cellResult(c, f.Profile, f.Profile, src, index))
		}
	}
	for _, m := range f.Mutants {
		if m.Verdict != Survived {
			continue
		}
		g := f.Group(m.Groups[0])
		text := fmt.Sprintf("Flag `%s` of %s: %s, and every attack the profile stops (%s) is still stopped: %s.",
			g.Text(), f.Profile, m.Description, strings.Join(f.Baseline.Stopped, ", "), f.verdictText(m))
		results = append(results, SARIFResult{RuleID: SurvivedRule, RuleIndex: index[SurvivedRule], Level: "note",
			Message:   SARIFText{Text: text},
			Locations: sarifLocation(src.File, f.Span(m)),
			PartialFingerprints: map[string]string{"sandboxlabFlag/v1": fingerprint(f.Profile, g.Text(), m.Operator,
				strconv.Itoa(f.occurrence(g)))},
			Properties: map[string]any{"mutant": m.ID, "class": m.Class}})
	}
	return newSARIF(o.Version, "sandboxlab/mutate-sandbox/"+f.Profile+"/", rules, results,
		map[string]any{"profile": f.Profile, "command": strings.Join(f.Command, " ")})
}

// occurrence counts the groups before g with g's words: a flag given
// twice keeps two fingerprints.
func (f *FlagMutation) occurrence(g FlagGroup) int {
	n := 0
	for _, o := range f.Groups {
		if o.Index < g.Index && o.Text() == g.Text() {
			n++
		}
	}
	return n
}

// writeSARIF writes the log as indented JSON.
func writeSARIF(w io.Writer, l *SARIFLog) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(l); err != nil {
		return fmt.Errorf("encoding SARIF: %w", err)
	}
	return nil
}
