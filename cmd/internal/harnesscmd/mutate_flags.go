package harnesscmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"sandboxlab"
	"sandboxlab/attacks"
	"sandboxlab/attacks/backends"
	"sandboxlab/cmd/internal/cli"
	"sandboxlab/harness"
	"sandboxlab/report"
	"sandboxlab/sandbox"
)

// shippedProfiles is where the shipped profiles are written, in the
// repository and in the sources built into the binary.
const shippedProfiles = "attacks/backends/profiles.yaml"

// loadProfiles returns the shipped profiles with those of file (if any)
// added, and the files they are written in, the shipped one first.
func loadProfiles(file string) ([]backends.Profile, []harness.ProfileFile, error) {
	profiles := backends.Shipped()
	data, err := fs.ReadFile(sandboxlab.Sources, shippedProfiles)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the shipped profiles: %w", err)
	}
	files := []harness.ProfileFile{{Path: shippedProfiles, Data: data}}
	if file == "" {
		return profiles, files, nil
	}
	user, err := backends.Load(file)
	if err != nil {
		return nil, nil, fmt.Errorf("--profiles: %w", err)
	}
	data, err = os.ReadFile(file)
	if err != nil {
		return nil, nil, fmt.Errorf("--profiles: %w", err)
	}
	return backends.Merge(profiles, user), append(files, harness.ProfileFile{Path: repoPath(file), Data: data}), nil
}

// repoPath names file as code scanning wants it: relative to the
// repository's root ($GITHUB_WORKSPACE, else the current directory) when
// it is below it, else as given.
func repoPath(file string) string {
	root := os.Getenv("GITHUB_WORKSPACE")
	if root == "" {
		root, _ = os.Getwd()
	}
	abs, err := filepath.Abs(file)
	if err != nil || root == "" {
		return file
	}
	if rel, err := filepath.Rel(root, abs); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return file
}

// attackEscapes says what each attack's escape is, for SARIF's rules.
func attackEscapes() map[string]string {
	out := map[string]string{}
	for _, a := range attacks.All() {
		out[a.ID] = a.Escapes
	}
	return out
}

// flagMutation is mutate --sandbox's flags and, validated, its runner.
type flagMutation struct {
	sandbox  string
	profiles string
	pairs    bool
	maxPairs int

	runner *harness.FlagRunner // validated
}

func (fm *flagMutation) setFlags(fs *flag.FlagSet) {
	fs.StringVar(&fm.sandbox, "sandbox", "", "mutate the command of the sandbox `NAME` (a profile, or custom:PREFIX) flag group by flag group instead")
	fs.StringVar(&fm.profiles, "profiles", "", "with --sandbox: also read the profiles in `FILE` (YAML, as the shipped ones; a second document may spell their groups)")
	fs.BoolVar(&fm.pairs, "pairs", false, "with --sandbox: mutate each survivor with each other survivor, then with each load-bearing flag,\nto tell a flag no attack tests from two that guard the same thing")
	fs.IntVar(&fm.maxPairs, "max-pairs", harness.DefaultMaxPairs, "with --pairs: run at most `N` pairs (pairs of survivors first, removals first)")
}

// validate resolves the sandbox and reads its command into groups.
func (fm *flagMutation) validate(o *mutateOptions, cl cli.Line) error {
	for _, f := range []string{"predictions", "no-select", "masking", "replay", "incremental", "force", "since", "fail-on", "shard-times"} {
		if cl.Given[f] {
			return fmt.Errorf("--sandbox and --%s: the flag mutation has no predictions, no planted defects and no gate of its own", f)
		}
	}
	switch {
	case fm.pairs && o.shardFlag != "":
		return errors.New("--pairs and --shard: the pairs need every mutant's verdict; run them unsharded")
	case fm.maxPairs < 1:
		return fmt.Errorf("--max-pairs: want at least 1, got %d", fm.maxPairs)
	}
	profiles, files, err := loadProfiles(fm.profiles)
	if err != nil {
		return err
	}
	sb, err := backends.Resolve(fm.sandbox, profiles, sandbox.Levels)
	if err != nil {
		return fmt.Errorf("--sandbox: %w", err)
	}
	if sb.Profile == nil {
		return errors.New("--sandbox: sandboxlab's own levels are mutated by their planted defects: run mutate without --sandbox")
	}
	only, err := attacks.ParseOnly(o.only)
	if err != nil {
		return fmt.Errorf("--only: %w", err)
	}
	if _, err := (attacks.SandboxOptions{Only: only, Suites: o.suites, Sandboxes: []backends.Sandbox{sb}}).Cells(); err != nil {
		return fmt.Errorf("--only: %w", err)
	}
	src, loc, specs, err := harness.LocateSandbox(sb, files)
	if err != nil {
		return fmt.Errorf("--sandbox %s: %w", fm.sandbox, err)
	}
	g, err := harness.GroupProfile(sb.Profile, specs)
	if err != nil {
		return fmt.Errorf("--sandbox %s: %w", fm.sandbox, err)
	}
	fm.runner = &harness.FlagRunner{Sandbox: sb, Grouping: g, Source: src, Located: loc, Only: only, Suites: o.suites,
		Shard: o.shard, Repeat: o.repeat, Pairs: fm.pairs, MaxPairs: fm.maxPairs, Jobs: o.jobs, Cores: harness.DefaultCores(),
		Timeout: o.timeout, Worker: harness.FlagWorkerCommand, Identity: harness.Identity(), Attacks: attackEscapes()}
	o.output.command = "flags-" + sb.Profile.Name
	return nil
}

// run runs the flag mutation and writes its report; the exit code says
// whether the unmutated profile ran (4 if not) and whether a cell
// flaked (5).
func (fm *flagMutation) run(ctx context.Context, o *mutateOptions, stdout, stderr io.Writer) error {
	build, err := buildDigest()
	if err != nil {
		return err
	}
	r := fm.runner
	r.Build = build
	p := o.progress(stderr)
	if p.on {
		r.Progress = func(pr harness.FlagProgress) {
			if pr.Mutant != nil {
				p.line("%s %s %s %s  %s", counter(pr.Done, pr.Total), pr.Phase, pr.Mutant.ID, pr.Mutant.Verdict, strings.Join(pr.Mutant.Killed, ","))
			}
		}
	}
	f, err := r.Run(ctx)
	p.end()
	if err != nil {
		return interrupted(err)
	}
	return finishFlags(f, &o.output, stdout)
}

// finishFlags writes a flag mutation's report, and under GitHub Actions
// its tables into the step's summary, and exits with its code.
func finishFlags(f *report.FlagMutation, out *output, stdout io.Writer) error {
	if err := out.write(stdout, f); err != nil {
		return err
	}
	if err := stepSummary(f); err != nil {
		return err
	}
	return cli.Exit(f.ExitCode())
}

// stepSummary appends r's markdown to $GITHUB_STEP_SUMMARY under GitHub
// Actions, which shows it on the run's page.
func stepSummary(r report.Report) error {
	path := os.Getenv("GITHUB_STEP_SUMMARY")
	if os.Getenv("GITHUB_ACTIONS") != "true" || path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("writing the step summary: %w", err)
	}
	if err := report.Write(f, report.Markdown, r); err != nil {
		f.Close()
		return fmt.Errorf("writing the step summary: %w", err)
	}
	return f.Close()
}

// readFlagShards reads the shards' reports as flag mutations, or returns
// nil when the first is not one (a mutate report).
func readFlagShards(paths []string) ([]*report.FlagMutation, error) {
	var out []*report.FlagMutation
	for i, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var probe struct {
			Profile *string `json:"profile"`
		}
		if err := json.Unmarshal(b, &probe); err != nil {
			return nil, fmt.Errorf("%s is not a report in JSON: %w", path, err)
		}
		if (probe.Profile != nil) != (i == 0 || out != nil) || (i == 0 && probe.Profile == nil) {
			if i == 0 {
				return nil, nil
			}
			return nil, fmt.Errorf("%s: a flag mutation's shard and another kind of report", path)
		}
		var f report.FlagMutation
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("%s is not a flag mutation's report: %w", path, err)
		}
		out = append(out, &f)
	}
	return out, nil
}

// flagMutationHelp is mutate --sandbox's part of mutate's help.
const flagMutationHelp = "With --sandbox NAME (a profile, or custom:PREFIX; --profiles adds a file of profiles) it mutates\n" +
	"another sandbox's command line instead. The command is read in flag groups (an option and its\n" +
	"arguments, or one option=value word) from arity tables of bwrap, firejail, runsc, unshare and podman,\n" +
	"or from the groups the profiles file spells in a second YAML document (groups: NAME: [[OPTION, ARG],\n" +
	"...]); a word that cannot be grouped is reported and kept, not guessed. Each mutant removes a group,\n" +
	"makes a read-only bind writable, or drops one namespace (bwrap's unshare-all gains share-net, or\n" +
	"becomes the other unshare options; a namespace mode becomes host). The unmutated profile's column\n" +
	"runs first; a mutant runs only the attacks it stops (selection: the report counts the cell runs saved)\n" +
	"and is load-bearing when one gets through, survived when none does, unviable (with what it printed)\n" +
	"when the sandbox no longer runs the harness's probe. --pairs mutates each survivor with each other\n" +
	"survivor, then with each load-bearing flag (at most --max-pairs): a pair that lets an attack through\n" +
	"that neither let through alone is two flags that guard the same thing (the survivor is masked); a\n" +
	"survivor no pair kills is untested. --only names attacks here; --suite, --shard, --repeat, -j and\n" +
	"--timeout work as above, and 'mutate merge' merges the shards. Formats: the per-flag table (text,\n" +
	"markdown, json, junit), stryker (the profile's file, each mutant at its flag), html (the table and\n" +
	"the mutation-testing-elements component showing the profile) and sarif (GitHub code scanning: a rule\n" +
	"per attack with its class's security-severity, a result per escape of the unmutated profile and per\n" +
	"survived flag, at the profile's line); --out writes the files flags-NAME.*. Under GitHub Actions the table also goes to $GITHUB_STEP_SUMMARY. Exit codes:\n" +
	"0 it ran (a survivor is a finding, not a failure), 4 the unmutated profile did not run or stops\n" +
	"nothing, 5 a flaky cell (with --repeat), 1 usage or internal error."

// mergeFlagsCmd is 'mutate merge' of the shards of a flag mutation.
func mergeFlagsCmd(shards []*report.FlagMutation, o *mergeOptions, stdout io.Writer) error {
	f, err := harness.MergeFlags(shards)
	if err != nil {
		return fmt.Errorf("merging: %w", err)
	}
	o.output.command = "flags-" + f.Profile
	return finishFlags(f, &o.output, stdout)
}
