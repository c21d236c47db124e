package harnesscmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sandboxlab"
	"sandboxlab/cmd/internal/cli"
	"sandboxlab/harness"
	"sandboxlab/mutants"
	"sandboxlab/report"
)

func mutateHelp() string {
	return "Runs the correct sandbox first (the baseline: every check must pass and the attack matrix must match\n" +
		"the predictions' baseline), then each planted defect: the checks and the attack cells of its own\n" +
		"suite (the course's: 26 checks, 16x6 cells), diffed against the predictions. Every check and cell\n" +
		"is a probe, run in a worker process of its own. The baseline records which planted sites each probe\n" +
		"reaches (in every process it involves); a defect then runs only the probes that reach its site, and\n" +
		"the others keep their baseline verdict (--no-select runs them all; a defect no probe reaches is\n" +
		"reported as not reached). Probes share the cores by what they cost in the baseline: many that wait\n" +
		"on clocks, few that compute.\n" +
		"Each suite's baseline is judged on its own: a broken one stops that suite's defects. The course's\n" +
		"summary, defects and baseline are reported first, exactly as the course has them, then the\n" +
		"hardening suite's; the gate covers both. Outcomes: exact, too_wide, extra, different,\n" +
		"escaped (no check failed), hung.\n\n" +
		"--shard K/N runs every N-th defect from the K-th (and the whole baseline); with --shard-times FILE,\n" +
		"an earlier run's JSON report, it cuts the shards by the defects' times instead, the longest first\n" +
		"to the shard with the least, so that a CI matrix's shards finish together. 'mutate merge' combines\n" +
		"the shards' JSON reports into the report and gate of the unsharded run, refusing shards of other\n" +
		"predictions, builds, suites or settings. --repeat N runs every probe N times: a probe whose verdict\n" +
		"changes is reported as flaky and fails the gate (exit 5). --masking looks, for each defect, for the\n" +
		"layers that hide it from a check that reaches it but missed it: it reruns that check with each other\n" +
		"layer taken away (and with the check's own removals undone) and reports the layers whose removal\n" +
		"reveals the defect while the check still passes on the correct sandbox.\n\n" +
		"--incremental FILE reads an earlier run's JSON report and reruns only what changed since: a probe's\n" +
		"verdict, on the correct sandbox or with a defect on, is reused when the library (sandbox/), the\n" +
		"machinery (the gate, the worker, the result model, go.mod), the probe's own files (a check's file, an\n" +
		"attack's file and program) and the files its package shares, and the environment (kernel, Landlock\n" +
		"ABI, cgroup layout, uid, the interpreter, the toolchain and modules) are as they were, by digests of\n" +
		"the sources built into the binary; reused facts are judged against the predictions as they are now.\n" +
		"The new report goes to FILE (or into --out); a missing FILE runs everything. --force reruns\n" +
		"everything and still writes FILE. --since REV runs only the defects whose planted site's declaration\n" +
		"'git diff REV' changed and those a probe whose files changed reaches, after the whole baseline: a\n" +
		"partial run, which the report says, whose summary and gate cover only what ran.\n\n" +
		"Exit codes: 0 the gate holds; 2 an unexpected escape (a defect no check caught, or an attack cell\n" +
		"that got through, neither predicted nor known; a defect that hung counts as one); 5 a flaky probe\n" +
		"(with --repeat); 3 another divergence (only with --fail-on any); 4 the baseline is broken; 1 usage\n" +
		"or internal error.\n\n" +
		"Reports: --format junit gives a testcase per defect (failed when unexpected, error when it hung,\n" +
		"skipped when its divergence is known) and one for the baseline, in a test suite per suite (mutate,\n" +
		"mutate.hardening); --format html is one self-contained page (the heat map, the per-defect table,\n" +
		"the mutation-testing-elements component); --format stryker is JSON in Stryker's\n" +
		"mutation-testing-report-schema; --out DIR writes every format; JSON has each defect's reached\n" +
		"probes and the baseline's reached-sites table. The text and markdown reports give, per level, how\n" +
		"late the kills of runs stopped at their time limit landed (p50, p99, max, the backstop's count,\n" +
		"and at L6 how late the init itself woke; the baseline's apart from the defects'), name the\n" +
		"latest kills by probe, and list the probes with runs starved of CPU (a probe that failed\n" +
		"starved, an attack cell that read stopped starved unless its loop runs at the lowest priority,\n" +
		"a check not about time that failed with a run stopped at its clock, a cell whose program\n" +
		"ends by itself with one, or a runaway_loop or fork_bomb cell that escaped where the correct\n" +
		"sandbox stops it, its judge's margin of time missed, runs once more, alone, and the second\n" +
		"verdict counts).\n" +
		"Under GitHub Actions (GITHUB_ACTIONS=true) each unexpected escape also becomes an ::error\n" +
		"annotation at the defect's planted site, on stderr (at most 10, then a ::notice:: for the rest).\n" +
		"Progress goes to stderr on a terminal (a bar: probe runs of the baseline, then of the defects,\n" +
		"elapsed, ETA) and, a line per defect, with --verbose.\n\n" + flagMutationHelp
}

// mutateOptions are mutate's flags.
type mutateOptions struct {
	selection
	output
	gateFlag
	predictions string
	shardFlag   string
	shardTimes  string
	noSelect    bool
	repeat      int
	masking     bool
	jobs        int
	timeout     time.Duration
	replay      string
	incremental string
	force       bool
	since       string
	flags       flagMutation

	shard harness.Shard // --shard, validated
	times *harness.ShardTimes
}

func (o *mutateOptions) SetFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.predictions, "predictions", "", "predictions `FILE` (default: the predictions.yaml built into the binary)")
	o.selection.setFlags(fs, "run only the defects `ID,...` (default: all of the suites; with it, only their suites run)")
	fs.StringVar(&o.shardFlag, "shard", "", "run only the `K/N`-th slice of the defects (every N-th from the K-th), for a CI matrix")
	fs.StringVar(&o.shardTimes, "shard-times", "", "with --shard: cut the shards by the defects' times in an earlier run's JSON report `FILE`,\n"+
		"so that they finish together (every shard must be given the same FILE)")
	fs.BoolVar(&o.noSelect, "no-select", false, "run every probe for every defect, not only those that reach its site")
	fs.IntVar(&o.repeat, "repeat", 1, "run every probe `N` times; a probe whose verdict changes is flaky (exit 5)")
	fs.BoolVar(&o.masking, "masking", false, "look for the layers that hide each defect from a check that reaches it")
	fs.IntVar(&o.jobs, "j", harness.DefaultJobs(), "probes run at once, at most (`N`); together they use no more CPU than there are cores")
	// The default in words: the number depends on the machine.
	fs.Lookup("j").DefValue = "4 per core"
	o.gateFlag.setFlags(fs)
	fs.DurationVar(&o.timeout, "timeout", harness.DefaultTimeout, "bound on one probe's run (a `DURATION` such as 90s or 6m); past it the probe's defect is reported as hung")
	fs.StringVar(&o.replay, "replay", "", "run nothing: judge what an earlier run measured (its JSON report `FILE`, from --format json\n"+
		"or --out) against the predictions, e.g. to try an edit of predictions.yaml")
	fs.StringVar(&o.incremental, "incremental", "", "reuse the verdicts of an earlier run (its JSON report `FILE`) whose inputs are unchanged,\n"+
		"run the rest, and write the new JSON report to FILE (to --out instead, when given)")
	fs.BoolVar(&o.force, "force", false, "with --incremental: reuse nothing, run everything, and write FILE")
	fs.StringVar(&o.since, "since", "", "run only the defects whose planted site 'git diff `REV`' changed, and those a changed probe reaches:\n"+
		"a partial run, whose gate covers only what ran")
	o.output.setFlags(fs, "mutate", &report.Mutation{}, true)
	o.flags.setFlags(fs)
	// --sandbox's report has SARIF (and no page).
	o.output.formats = append(o.output.formats, report.SARIF)
	fs.Lookup("format").Usage = "report `FORMAT` on stdout: text, markdown, json, junit, html, stryker, sarif (sarif with --sandbox)"
}

func (o *mutateOptions) Validate(cl cli.Line) error {
	if err := cli.FirstError(cl.NoArgs(), o.output.validate(), o.gateFlag.validate()); err != nil {
		return err
	}
	switch {
	case o.jobs < 1:
		return fmt.Errorf("-j: want at least 1, got %d", o.jobs)
	case o.repeat < 1:
		return fmt.Errorf("--repeat: want at least 1, got %d", o.repeat)
	}
	if o.shardFlag != "" {
		shard, err := harness.ParseShard(o.shardFlag)
		if err != nil {
			return fmt.Errorf("--shard: %w", err)
		}
		o.shard = shard
	}
	if o.shardTimes != "" {
		if o.shardFlag == "" {
			return errors.New("--shard-times goes with --shard K/N")
		}
		times, err := harness.ReadShardTimes(o.shardTimes)
		if err != nil {
			return fmt.Errorf("--shard-times: %w", err)
		}
		o.times = times
	}
	if err := o.selection.validate(); err != nil {
		return err
	}
	if o.flags.sandbox != "" {
		return o.flags.validate(o, cl)
	}
	for _, f := range []string{"profiles", "pairs", "max-pairs"} {
		if cl.Given[f] {
			return fmt.Errorf("--%s goes with --sandbox NAME", f)
		}
	}
	if o.f == report.SARIF {
		return errors.New("--format sarif goes with --sandbox NAME (the planted defects' run has stryker and junit for CI)")
	}
	if o.replay != "" && (cl.Given["suite"] || cl.Given["shard"] || o.masking || o.repeat > 1 || o.noSelect || o.incremental != "" || o.since != "") {
		return errors.New("--replay judges the earlier run as it was: no --suite, --shard, --repeat, --no-select, --masking, --incremental or --since")
	}
	return o.validateIncremental()
}

// validateIncremental checks the flags of the two modes that run less
// than everything.
func (o *mutateOptions) validateIncremental() error {
	switch {
	case o.force && o.incremental == "":
		return errors.New("--force goes with --incremental FILE")
	case o.incremental != "" && o.since != "":
		return errors.New("--incremental and --since: choose one (a partial run's report is no whole run to write to FILE)")
	case o.incremental != "" && o.masking:
		return errors.New("--incremental and --masking: the masking search's runs are not in the report to reuse; run it without --incremental")
	case o.incremental != "" && o.shardFlag != "" && o.out == "":
		return errors.New("--incremental with --shard needs --out DIR: a shard's report is not the whole run to write to FILE")
	case o.since != "" && o.shardFlag != "":
		return errors.New("--since and --shard: choose one")
	}
	return nil
}

func mutateCmd(ctx context.Context, o *mutateOptions, stdout, stderr io.Writer) error {
	if o.flags.runner != nil {
		return o.flags.run(ctx, o, stdout, stderr)
	}
	if !mutants.Compiled {
		return mutants.ErrNotCompiled
	}
	preds, digest, err := harness.LoadPredictions(o.predictions)
	if err != nil {
		return err
	}
	if o.replay != "" {
		prev, err := readMutation(o.replay)
		if err != nil {
			return fmt.Errorf("--replay: %w", err)
		}
		m, err := harness.Rejudge(prev, preds, o.failOn)
		if err != nil {
			return fmt.Errorf("--replay %s: %w", o.replay, err)
		}
		return finishMutate(m, &o.output, stdout, stderr)
	}
	build, err := buildDigest()
	if err != nil {
		return err
	}
	r := o.runner(preds)
	r.Build, r.PredictionsDigest = build, digest
	if err := o.prepareIncremental(ctx, r, stderr); err != nil {
		return err
	}
	eta := newMutateETA(o.progress(stderr), o.shard)
	r.Progress = eta.step
	m, err := r.Run(ctx)
	eta.p.end()
	if err != nil {
		return err
	}
	if o.incremental != "" && o.out == "" {
		if err := writeMutationFile(o.incremental, m); err != nil {
			return fmt.Errorf("--incremental: %w", err)
		}
	}
	return finishMutate(m, &o.output, stdout, stderr)
}

// prepareIncremental gives r the digests of what its verdicts depend on
// (every run records them, so that a later --incremental can start from
// its report), the earlier run to reuse with --incremental, and the diff
// with --since. A run that cannot digest its inputs records none, and
// with --incremental that is an error: what cannot be vouched for is not
// reused silently.
func (o *mutateOptions) prepareIncremental(ctx context.Context, r *harness.Runner, stderr io.Writer) error {
	inputs, err := harness.ComputeInputs(sandboxlab.Sources, hostFingerprint(), harness.Registered())
	switch {
	case err != nil && o.incremental != "":
		return fmt.Errorf("--incremental: %w", err)
	case err != nil:
		fmt.Fprintf(stderr, "sandboxlab mutate: the report records no input digests (a later --incremental reuses nothing of it): %v\n", err)
	}
	r.Inputs = inputs
	if o.incremental != "" && !o.force {
		prev, err := readMutation(o.incremental)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fmt.Fprintf(stderr, "sandboxlab mutate: no earlier run at %s: everything runs\n", o.incremental)
		case err != nil:
			return fmt.Errorf("--incremental: %w", err)
		default:
			r.Previous = prev
		}
	}
	if o.since != "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("--since: %w", err)
		}
		root := moduleRoot(wd)
		if root == "" {
			return errors.New("--since: not in a checkout of sandboxlab (no go.mod of module sandboxlab here or above)")
		}
		if r.Since, err = harness.GitSince(ctx, root, o.since, harness.Registered()); err != nil {
			return fmt.Errorf("--since: %w", err)
		}
	}
	return nil
}

// hostFingerprint is harness.HostFingerprint; a test of this package,
// whose binary is no reexec helper, gives its own.
var hostFingerprint = harness.HostFingerprint

// writeMutationFile writes m's JSON report to path, whole or not at all: the
// earlier run it replaces stays until the new one is complete.
func writeMutationFile(path string, m *report.Mutation) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := report.WriteWith(tmp, report.JSON, m, report.Options{}); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// runner is the harness's runner as the flags set it, its probes run by
// this binary as the worker.
func (o *mutateOptions) runner(preds *harness.Predictions) *harness.Runner {
	return &harness.Runner{
		Worker:      harness.WorkerCommand,
		Idle:        harness.IdleProbe,
		Predictions: preds,
		Suites:      o.suites,
		Only:        o.ids(),
		Shard:       o.shard,
		ShardTimes:  o.times,
		NoSelect:    o.noSelect,
		Repeat:      o.repeat,
		Masking:     o.masking,
		Jobs:        o.jobs,
		Cores:       harness.DefaultCores(),
		Timeout:     o.timeout,
		FailOn:      o.failOn,
		Identity:    harness.Identity(),
	}
}

// buildDigest identifies this binary, so that shards run by another
// build are not merged.
func buildDigest() (string, error) {
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		return "", fmt.Errorf("identifying the build: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("identifying the build: %w", err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// readMutation reads a mutate report back from its JSON.
func readMutation(path string) (*report.Mutation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m report.Mutation
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s is not a mutate report in JSON: %w", path, err)
	}
	return &m, nil
}

// finishMutate writes the report and the annotations and exits with the
// gate's code.
func finishMutate(m *report.Mutation, out *output, stdout, stderr io.Writer) error {
	if err := out.write(stdout, m); err != nil {
		return err
	}
	// Annotations go to stderr: the Actions runner reads workflow
	// commands from both streams, and stdout may be carrying JSON or
	// JUnit that a ::error line would corrupt.
	if os.Getenv("GITHUB_ACTIONS") == "true" {
		if err := report.WriteGitHubAnnotations(stderr, m, harness.SiteLines(sourceRoots()...)); err != nil {
			return fmt.Errorf("writing annotations: %w", err)
		}
	}
	return cli.Exit(harness.ExitCode(m))
}

// sourceRoots lists where the planted sites' files may be found, most
// likely first: the current directory (CI runs in the checkout),
// $GITHUB_WORKSPACE, and the sandboxlab module root above the current
// directory or above this binary (bin/sandboxlab in a checkout).
func sourceRoots() []string {
	roots := []string{"."}
	if ws := os.Getenv("GITHUB_WORKSPACE"); ws != "" {
		roots = append(roots, ws)
	}
	starts := []string{}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, dir := range starts {
		if root := moduleRoot(dir); root != "" {
			roots = append(roots, root)
		}
	}
	return roots
}

// moduleRoot returns the nearest directory at or above dir whose go.mod
// declares module sandboxlab, or "".
func moduleRoot(dir string) string {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if strings.TrimSpace(line) == "module sandboxlab" {
					return dir
				}
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
