package harness

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/skip"

	"sandboxlab/attacks/backends"
	"sandboxlab/report"
)

// fakebox is a stand-in sandbox whose flags each guard one attack:
// --fsize the disk filler, --nofile the descriptor hoarder, --clearenv
// and --unsetenv FAKE_API_KEY both the environment's secret (two flags
// that guard the same thing), --nice nothing the battery tests; it
// refuses to start without --ok, as a real sandbox does without its root.
// It runs the program as its child, as the real sandboxes do: the host
// looks for the program below the sandbox's own process.
const fakebox = `#!/bin/sh
ok= clear= unset_vars= fsize= nofile= nice=
while [ $# -gt 0 ]; do
	case "$1" in
	--ok) ok=1 ;;
	--clearenv) clear=1 ;;
	--unsetenv) shift; unset_vars="$unset_vars $1" ;;
	--fsize) shift; fsize=$1 ;;
	--nofile) shift; nofile=$1 ;;
	--nice) shift; nice=$1 ;;
	--) shift; break ;;
	*) echo "fakebox: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
[ -n "$ok" ] || { echo "fakebox: refusing to start without --ok" >&2; exit 1; }
[ -z "$fsize" ] || ulimit -f "$fsize"
[ -z "$nofile" ] || ulimit -n "$nofile"
for v in $unset_vars; do unset "$v"; done
set -- ${nice:+nice -n "$nice"} "$@"
[ -z "$clear" ] || set -- env -i PATH=/usr/bin:/bin "$@"
"$@"
`

// fakeProfiles is the profiles file of fakebox at dir, with its groups
// spelled in the file's second document (fakebox has no arity table).
func fakeProfiles(dir string) string {
	return `version: 1
profiles:
  - name: fakebox
    about: a stand-in sandbox whose flags each guard one attack
    command: [` + filepath.Join(dir, "fakebox") + `, --ok, --clearenv, --unsetenv, FAKE_API_KEY,
              --fsize, "8192", --nofile, "64", --nice, "5", --]
---
groups:
  fakebox:
    - [--ok]
    - [--clearenv]
    - [--unsetenv, FAKE_API_KEY]
    - [--fsize, "8192"]
    - [--nofile, "64"]
    - [--nice, "5"]
    - {words: [--], kind: end}
`
}

// fakeRunner is a flag runner of fakebox on the attacks it guards
// against, its profile read from its file as the CLI reads one.
func fakeRunner(t *testing.T) *FlagRunner {
	t.Helper()
	dir, err := os.MkdirTemp("", "sandboxlab-fakebox-")
	assert.NilError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	// The backend runs as the programs' identity: it must reach the script.
	assert.NilError(t, os.Chmod(dir, 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "fakebox"), []byte(fakebox), 0o755))
	data := []byte(fakeProfiles(dir))
	ps, err := backends.Decode(strings.NewReader(string(data)), "fakebox.yaml")
	assert.NilError(t, err)
	sb, err := backends.Resolve("fakebox", ps, 6)
	assert.NilError(t, err)
	src, loc, specs, err := LocateSandbox(sb, []ProfileFile{{Path: "fakebox.yaml", Data: data}})
	assert.NilError(t, err)
	g, err := GroupProfile(sb.Profile, specs)
	assert.NilError(t, err)
	return &FlagRunner{Sandbox: sb, Grouping: g, Source: src, Located: loc,
		Only: []string{"fd_hoarder", "disk_filler", "env_secrets"}, Pairs: true,
		Jobs: DefaultJobs(), Cores: DefaultCores(), Timeout: 2 * time.Minute, Worker: FlagWorkerCommand, Identity: Identity()}
}

// byGroup maps each mutant's first group's words to the mutant.
func byGroup(f *report.FlagMutation) map[string]report.FlagMutant {
	out := map[string]report.FlagMutant{}
	for _, m := range f.Mutants {
		out[f.Group(m.Groups[0]).Text()+" "+m.Operator] = m
	}
	return out
}

// TestFlagMutationFakeSandbox: the fake sandbox gives the table its
// flags are made to give: two load-bearing, one unviable with what it
// printed, one untested survivor, and two survivors that a pair shows to
// guard the same thing; at the lines of the profile's file.
func TestFlagMutationFakeSandbox(t *testing.T) {
	skip.If(t, !pythonHere(), "no /usr/bin/python3")
	r := fakeRunner(t)
	f, err := r.Run(context.Background())
	assert.NilError(t, err)
	assert.Assert(t, f.Baseline.OK, f.Baseline.Problem)
	assert.DeepEqual(t, f.Baseline.Stopped, []string{"disk_filler", "fd_hoarder", "env_secrets"})
	m := byGroup(f)
	assert.Check(t, is.Len(f.Mutants, 6))
	assert.Check(t, is.Equal(m["--ok remove"].Verdict, report.Unviable))
	assert.Check(t, is.Contains(m["--ok remove"].Unviable, "fakebox: refusing to start without --ok"))
	assert.Check(t, is.DeepEqual(m["--fsize 8192 remove"].Killed, []string{"disk_filler"}))
	assert.Check(t, is.DeepEqual(m["--nofile 64 remove"].Killed, []string{"fd_hoarder"}))
	for _, k := range []string{"--clearenv remove", "--unsetenv FAKE_API_KEY remove"} {
		assert.Check(t, is.Equal(m[k].Verdict, report.Survived), k)
		assert.Check(t, is.Equal(m[k].Class, report.Masked), k)
		assert.Check(t, is.Len(m[k].With, 1), k)
	}
	assert.Check(t, is.Equal(m["--nice 5 remove"].Verdict, report.Survived))
	assert.Check(t, is.Equal(m["--nice 5 remove"].Class, report.Untested))
	// Three pairs of survivors, six of a survivor with a load-bearing
	// flag: only the two guards of the environment are killed together.
	assert.Check(t, is.Len(f.Pairs, 9))
	killed := slices.IndexFunc(f.Pairs, func(p report.FlagMutant) bool { return p.Verdict == report.LoadBearing })
	assert.Assert(t, killed >= 0)
	assert.Check(t, is.DeepEqual(f.Pairs[killed].Killed, []string{"env_secrets"}))
	assert.Check(t, is.DeepEqual(f.Pairs[killed].Groups, []int{2, 3}))
	// Selection: only the three stopped attacks ran, and an unviable
	// mutant ran none.
	assert.Check(t, is.Equal(f.Run.CellRuns, 3*(5+9)))
	assert.Check(t, is.Equal(f.Run.CellRunsUnselected, 3*(6+9)))
	assert.Check(t, is.Equal(slices.IndexFunc(f.Pairs[killed+1:], func(p report.FlagMutant) bool { return p.Verdict == report.LoadBearing }), -1))
	// Each flag at its line and column in the file.
	assert.Check(t, is.DeepEqual(f.Group(4).At, &report.SourceSpan{StartLine: 6, StartColumn: 15, EndLine: 6, EndColumn: 30}))
	assert.Check(t, is.Equal(f.Source.File, "fakebox.yaml"))
}

// pythonHere reports whether the attacks' interpreter is installed.
func pythonHere() bool {
	_, err := os.Stat("/usr/bin/python3")
	return err == nil
}

// TestMutateFlagsBubblewrap mutates a real peer, the shipped bubblewrap
// profile, on a subset of its flags and of the attacks: the network
// namespace and the tmpfs over ~/.ssh are load-bearing, the read-only
// root removed leaves bwrap nothing to run, and --new-session survives.
// It runs with the mutation tests (make test), not under -short.
func TestMutateFlagsBubblewrap(t *testing.T) {
	skip.If(t, testing.Short(), "runs bubblewrap for every mutant (make test runs it)")
	skip.If(t, !pythonHere(), "no /usr/bin/python3")
	profiles := backends.Shipped()
	sb, err := backends.Resolve("bubblewrap", profiles, 6)
	assert.NilError(t, err)
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed")
	}
	data, err := os.ReadFile("../attacks/backends/profiles.yaml")
	assert.NilError(t, err)
	src, loc, specs, err := LocateSandbox(sb, []ProfileFile{{Path: "attacks/backends/profiles.yaml", Data: data}})
	assert.NilError(t, err)
	g, err := GroupProfile(sb.Profile, specs)
	assert.NilError(t, err)
	r := &FlagRunner{Sandbox: sb, Grouping: g, Source: src, Located: loc,
		Only:   []string{"exfiltrate", "read_ssh_key", "lingering_child"},
		Groups: []string{"--unshare-net", "--tmpfs {home}/.ssh", "--ro-bind / /", "--new-session"}, Pairs: true,
		Jobs: DefaultJobs(), Cores: DefaultCores(), Timeout: 2 * time.Minute, Worker: FlagWorkerCommand, Identity: Identity()}
	began := time.Now()
	f, err := r.Run(context.Background())
	assert.NilError(t, err)
	t.Logf("%d mutants and %d pairs in %v", len(f.Mutants), len(f.Pairs), time.Since(began))
	assert.Assert(t, f.Baseline.OK, f.Baseline.Problem)
	assert.DeepEqual(t, f.Baseline.Stopped, []string{"lingering_child", "exfiltrate", "read_ssh_key"})
	m := byGroup(f)
	assert.Check(t, is.DeepEqual(m["--unshare-net remove"].Killed, []string{"exfiltrate"}))
	assert.Check(t, is.DeepEqual(m["--tmpfs {home}/.ssh remove"].Killed, []string{"read_ssh_key"}))
	assert.Check(t, is.Equal(m["--ro-bind / / remove"].Verdict, report.Unviable))
	assert.Check(t, is.Contains(m["--ro-bind / / remove"].Unviable, "bwrap"))
	assert.Check(t, is.Equal(m["--new-session remove"].Verdict, report.Survived))
	assert.Check(t, is.Equal(f.Group(3).At.StartLine, loc.Words[3].StartLine))
}
