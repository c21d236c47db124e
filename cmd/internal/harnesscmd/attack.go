package harnesscmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"sandboxlab/attacks"
	"sandboxlab/attacks/backends"
	"sandboxlab/cmd/internal/cli"
	"sandboxlab/harness"
	"sandboxlab/report"
	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

func attackHelp() string {
	return "Runs each attack program (Python, through the sandbox as agent code is run) at each level\n" +
		"and judges it from evidence on the host, never from the program's word. Prints one row per\n" +
		"attack, one column per level (escaped, or what stopped it), the first level that stops it and\n" +
		"the level expected to; ESCAPED marks an escape at or above that level, and with --format junit\n" +
		"such a cell is a failed testcase. Cells run one at a time; everything a cell started is removed\n" +
		"after it. Each suite has a matrix of its own at the levels it has: the course's 16 attacks at\n" +
		"L0-L5 first, exactly as the course has them, then the hardening suite's (JUnit: a test suite per\n" +
		"suite, attack and attack.hardening); --format html draws the matrix as a heat map. Progress (a bar,\n" +
		"and a line per cell) goes to stderr on a terminal; --verbose prints the lines anyway.\n" +
		"Exits 0 when the matrix ran, whatever it says, and 1 on a usage or internal error.\n\n" +
		"With --sandbox (repeatable) the same attacks run under each sandbox named instead, side by\n" +
		"side, one column each, judged by the same host-side evidence: sandboxlab:L<n> is one of\n" +
		"sandboxlab's levels; a profile's name runs the program under another sandbox; custom:PREFIX\n" +
		"runs it under a command prefix of your own (placeholders {workdir}, {python}, {home}), e.g.\n" +
		"  --sandbox 'custom:bwrap --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc /proc\n" +
		"             --bind {workdir} {workdir} --chdir {workdir} --'\n" +
		"The harness bounds every run under another sandbox with its own watchdog and kills it whole.\n" +
		"An attack that needs sandboxlab's file API is n/a there; a sandbox that is not installed, or\n" +
		"does not run the harness's probe, is a skipped column with the reason. --profiles adds a\n" +
		"YAML file of profiles of your own (same shape as the shipped ones). Progress there is a line\n" +
		"per cell, on a terminal or with --verbose. --format sarif gives SARIF 2.1.0 for GitHub code\n" +
		"scanning: a rule per attack with its class's security-severity, a result per escaped cell of each\n" +
		"profile, at the profile's command in its file (sandboxlab's own levels get none); under GitHub\n" +
		"Actions the matrix also goes to $GITHUB_STEP_SUMMARY. 'mutate --sandbox NAME' tells which of a\n" +
		"profile's flags matter.\n\n" +
		"profiles:\n" + profileList(backends.Shipped()) + "\n\n" +
		"attacks (first level that stops each on the correct sandbox: what makes it an escape):\n" +
		attackList()
}

// attackOptions are attack's flags.
type attackOptions struct {
	selection
	output
	cli.DefectFlag
	levels    string
	sandboxes cli.ListFlag
	profiles  string
	// files are the profiles files, for the columns' sources (SARIF).
	files []harness.ProfileFile

	// validated: the matrix to run and its cells, or with --sandbox the
	// sandboxes' columns.
	matrix    attacks.Options
	columns   *attacks.SandboxOptions
	cellCount int
}

func (o *attackOptions) SetFlags(fs *flag.FlagSet) {
	o.selection.setFlags(fs, "run only the attacks `ID,...` (default: all of the suites)")
	fs.StringVar(&o.levels, "levels", fmt.Sprintf("0-%d", sandbox.Levels-1), "run only the `LEVELS`: levels and ranges, such as 0-5, 3 or 0,4-5")
	fs.Var(&o.sandboxes, "sandbox", "run the attacks under the sandbox `NAME` (repeatable): sandboxlab:L<n>, a profile, or custom:PREFIX")
	fs.StringVar(&o.profiles, "profiles", "", "also read the profiles in `FILE` (YAML, as the shipped profiles); one with a shipped name replaces it")
	o.output.setFlags(fs, "attack", &report.Attacks{}, true)
	o.DefectFlag.AddFlag(fs)
	// The attack × sandbox matrix also has SARIF, for code scanning.
	o.output.formats = append(o.output.formats, report.SARIF)
	fs.Lookup("format").Usage = "report `FORMAT` on stdout: text, markdown, json, junit, html, sarif (sarif with --sandbox)"
}

func (o *attackOptions) Validate(cl cli.Line) error {
	if err := cli.FirstError(cl.NoArgs(), o.output.validate(), o.selection.validate()); err != nil {
		return err
	}
	only, err := attacks.ParseOnly(o.only)
	if err != nil {
		return fmt.Errorf("--only: %w", err)
	}
	o.matrix = attacks.Options{Only: only, Suites: o.suites}
	if len(o.sandboxes) > 0 || o.profiles != "" {
		if cl.Given["levels"] {
			return errors.New("--levels and --sandbox: name levels as --sandbox sandboxlab:L<n>")
		}
		if err := o.validateColumns(); err != nil {
			return err
		}
		return o.DefectFlag.Check()
	}
	if o.f == report.SARIF {
		return errors.New("--format sarif goes with --sandbox: its results are located at the profiles' lines")
	}
	if o.matrix.Levels, err = attacks.ParseLevels(o.levels); err != nil {
		return fmt.Errorf("--levels: %w", err)
	}
	if o.cellCount, err = o.matrix.Cells(); err != nil {
		return fmt.Errorf("--only: %w", err)
	}
	return o.DefectFlag.Check()
}

// validateColumns resolves --sandbox and --profiles into the columns.
func (o *attackOptions) validateColumns() error {
	if len(o.sandboxes) == 0 {
		return errors.New("--profiles: name the sandboxes to run with --sandbox")
	}
	profiles, files, err := loadProfiles(o.profiles)
	if err != nil {
		return err
	}
	o.files = files
	cols := &attacks.SandboxOptions{Only: o.matrix.Only, Suites: o.matrix.Suites}
	seen := map[string]bool{}
	for _, name := range o.sandboxes {
		sb, err := backends.Resolve(name, profiles, sandbox.Levels)
		if err != nil {
			return fmt.Errorf("--sandbox: %w", err)
		}
		if seen[name] {
			return fmt.Errorf("--sandbox: %s is named twice", name)
		}
		seen[name] = true
		cols.Sandboxes = append(cols.Sandboxes, sb)
	}
	if o.cellCount, err = cols.Cells(); err != nil {
		return fmt.Errorf("--only: %w", err)
	}
	o.columns = cols
	return nil
}

func attackCmd(ctx context.Context, o *attackOptions, stdout, stderr io.Writer) error {
	if err := o.Enable(); err != nil {
		return err
	}
	if o.columns != nil {
		return sandboxesCmd(ctx, o, stdout, stderr)
	}
	opts, cells := o.matrix, o.cellCount
	p := o.progress(stderr)
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
		return interrupted(err)
	}
	return o.write(stdout, rep)
}

// sandboxesCmd runs the attacks under each sandbox named and writes the
// attack × sandbox matrix.
func sandboxesCmd(ctx context.Context, o *attackOptions, stdout, stderr io.Writer) error {
	opts, cells := *o.columns, o.cellCount
	if p := o.progress(stderr); p.on {
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
		return interrupted(err)
	}
	rep.Escapes = attackEscapes()
	for i, sb := range opts.Sandboxes {
		// Where each profile is written, for SARIF; a profile whose file
		// cannot be read is still reported, at no line.
		if src, _, _, err := harness.LocateSandbox(sb, o.files); err == nil && src != nil && i < len(rep.Sandboxes) {
			src.Text = ""
			rep.Sandboxes[i].Source = src
		}
	}
	if err := o.write(stdout, rep); err != nil {
		return err
	}
	return stepSummary(rep)
}

// interrupted words an interrupt for people.
func interrupted(err error) error {
	if errors.Is(err, context.Canceled) {
		return errors.New("interrupted")
	}
	return err
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

// profileList describes the shipped profiles for --help.
func profileList(ps []backends.Profile) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "  %-19s %s\n", p.Name, p.About)
	}
	return strings.TrimRight(b.String(), "\n")
}
