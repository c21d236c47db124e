package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"sandboxlab/attacks"
	"sandboxlab/attacks/backends"
	"sandboxlab/report"
	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

func init() {
	register(command{name: "attack", summary: "run the attack programs (the course's 16, then the hardening suite's) at each level and print the matrix", run: attackCmd})
}

func attackCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("attack", "[--suite course|hardening|all] [--only ID,...] [--levels 0-5 | --sandbox NAME ... [--profiles FILE]] "+formatUsage+" [--defect ID]",
		"Runs each attack program (Python, through the sandbox as agent code is run) at each level\n"+
			"and judges it from evidence on the host, never from the program's word. Prints one row per\n"+
			"attack, one column per level (escaped, or what stopped it), the first level that stops it and\n"+
			"the level expected to; ESCAPED marks an escape at or above that level, and with --format junit\n"+
			"such a cell is a failed testcase. Cells run one at a time; everything a cell started is removed\n"+
			"after it. Each suite has a matrix of its own at the levels it has: the course's 16 attacks at\n"+
			"L0-L5 first, exactly as the course has them, then the hardening suite's (JUnit: a test suite per\n"+
			"suite, attack and attack.hardening); --format html draws the matrix as a heat map. Progress (a bar,\n"+
			"and a line per cell) goes to stderr on a terminal; --verbose prints the lines anyway.\n"+
			"Exits 0 when the matrix ran, whatever it says, and 1 on a usage or internal error.\n\n"+
			"With --sandbox (repeatable) the same attacks run under each sandbox named instead, side by\n"+
			"side, one column each, judged by the same host-side evidence: sandboxlab:L<n> is one of\n"+
			"sandboxlab's levels; a profile's name runs the program under another sandbox; custom:PREFIX\n"+
			"runs it under a command prefix of your own (placeholders {workdir}, {python}, {home}), e.g.\n"+
			"  --sandbox 'custom:bwrap --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc /proc\n"+
			"             --bind {workdir} {workdir} --chdir {workdir} --'\n"+
			"The harness bounds every run under another sandbox with its own watchdog and kills it whole.\n"+
			"An attack that needs sandboxlab's file API is n/a there; a sandbox that is not installed, or\n"+
			"does not run the harness's probe, is a skipped column with the reason. --profiles adds a\n"+
			"YAML file of profiles of your own (same shape as the shipped ones).\n\n"+
			"profiles:\n"+profileList(backends.Shipped())+"\n\n"+
			"attacks (first level that stops each on the correct sandbox: what makes it an escape):\n"+
			attackList(), stderr)
	suite := suiteFlag(fs)
	only := fs.String("only", "", "run only the attacks `ID,...` (default: all of the suites)")
	levels := fs.String("levels", fmt.Sprintf("0-%d", sandbox.Levels-1), "run only the `LEVELS`: levels and ranges, such as 0-5, 3 or 0,4-5")
	var sandboxes listFlag
	fs.Var(&sandboxes, "sandbox", "run the attacks under the sandbox `NAME` (repeatable): sandboxlab:L<n>, a profile, or custom:PREFIX")
	profilesFile := fs.String("profiles", "", "also read the profiles in `FILE` (YAML, as the shipped profiles); one with a shipped name replaces it")
	out := outputFlags(fs, "attack", report.HTML)
	defect := defectFlag(fs)
	if stop, err := parseFlags(fs, args); stop {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return usagef("%v", err)
	}
	opts := attacks.Options{}
	var err error
	if opts.Suites, err = parseSuite(*suite); err != nil {
		return err
	}
	if opts.Only, err = attacks.ParseOnly(*only); err != nil {
		return usagef("--only: %v", err)
	}
	if len(sandboxes) > 0 || *profilesFile != "" {
		if flagSet(fs, "levels") {
			return usagef("--levels and --sandbox: name levels as --sandbox sandboxlab:L<n>")
		}
		return sandboxesCmd(ctx, sandboxes, *profilesFile, opts, *defect, out, stdout, stderr)
	}
	if opts.Levels, err = attacks.ParseLevels(*levels); err != nil {
		return usagef("--levels: %v", err)
	}
	cells, err := opts.Cells()
	if err != nil {
		return usagef("--only: %v", err)
	}
	if err := enableDefect(*defect); err != nil {
		return err
	}
	p := out.progress(stderr)
	if p.on {
		p.start("attack", cells, nil, nil)
		done := 0
		opts.Progress = func(c report.Cell) {
			done++
			state := verdict.CellEscaped
			if !c.Escaped {
				state = "stopped (" + c.StoppedBy + ")"
			}
			p.line("%s %-22s %s  %d ms", counter(done, cells), c.Name(), state, c.MS)
			p.set(done, cells)
		}
	}
	rep, err := attacks.Run(ctx, opts)
	p.end()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			err = errors.New("interrupted")
		}
		return err
	}
	return out.write(stdout, rep)
}

// attackList describes every attack for --help, the suite of each
// after the course's named.
func attackList() string {
	var b strings.Builder
	for _, a := range attacks.All() {
		suite := ""
		if a.Suite != verdict.Course {
			suite = " (" + string(a.Suite) + ")"
		}
		fmt.Fprintf(&b, "  %-19s L%d: %s%s\n", a.ID, a.FirstStop, a.Escapes, suite)
	}
	return strings.TrimRight(b.String(), "\n")
}

// sandboxesCmd runs the attacks of opts under each sandbox named and
// writes the attack × sandbox matrix.
func sandboxesCmd(ctx context.Context, names []string, profilesFile string, sel attacks.Options, defect string, out *output, stdout, stderr io.Writer) error {
	if len(names) == 0 {
		return usagef("--profiles: name the sandboxes to run with --sandbox")
	}
	profiles := backends.Shipped()
	if profilesFile != "" {
		user, err := backends.Load(profilesFile)
		if err != nil {
			return usagef("--profiles: %v", err)
		}
		profiles = backends.Merge(profiles, user)
	}
	opts := attacks.SandboxOptions{Only: sel.Only, Suites: sel.Suites}
	seen := map[string]bool{}
	for _, name := range names {
		sb, err := backends.Resolve(name, profiles, sandbox.Levels)
		if err != nil {
			return usagef("--sandbox: %v", err)
		}
		if seen[name] {
			return usagef("--sandbox: %s is named twice", name)
		}
		seen[name] = true
		opts.Sandboxes = append(opts.Sandboxes, sb)
	}
	cells, err := opts.Cells()
	if err != nil {
		return usagef("--only: %v", err)
	}
	if err := enableDefect(defect); err != nil {
		return err
	}
	if p := out.progress(stderr); p.on {
		done := 0
		opts.Progress = func(c report.SandboxCell) {
			done++
			state := string(c.State)
			if c.Mechanism != "" {
				state += " (" + c.Mechanism + ")"
			}
			p.line("%s %-42s %s  %d ms", counter(done, cells), c.Name(), state, c.MS)
		}
		opts.Column = func(sb report.Sandbox) {
			if sb.Skipped != "" {
				p.line("%s: skipped: %s", sb.Name, sb.Skipped)
			}
		}
	}
	rep, err := attacks.RunSandboxes(ctx, opts)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			err = errors.New("interrupted")
		}
		return err
	}
	return out.write(stdout, rep)
}

// profileList describes the shipped profiles for --help.
func profileList(ps []backends.Profile) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "  %-19s %s\n", p.Name, p.About)
	}
	return strings.TrimRight(b.String(), "\n")
}
