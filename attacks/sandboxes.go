package attacks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"sandboxlab/attacks/backends"
	"sandboxlab/mutants"
	"sandboxlab/report"
	"sandboxlab/sandbox"
	vocab "sandboxlab/verdict"
)

// elsewhere is what an attack says about running under another sandbox
// than sandboxlab's own levels (a backend), where the same program runs
// and the same judge decides. The zero value: it applies, and it does not
// run where the program would have host root privileges.
type elsewhere struct {
	// na, when set, says why the attack does not apply to other
	// sandboxes: it needs something only sandboxlab has (its file API, a
	// session that persists). Such a cell is n/a, never a stop.
	na string
	// harmlessAsRoot: the program changes nothing but the fixtures the
	// harness hands it by path, reads no real secret and bounds itself,
	// so it may run where the program has host root privileges in the
	// host's user namespace (firejail started as root). Every other
	// attack is n/a there.
	harmlessAsRoot bool
	// rootRisk says why an attack is not harmless as host root.
	rootRisk string
	// keepsRunning: the escape is to keep running, so a run the harness's
	// watchdog had to stop is an escape, whether or not the host could see
	// the program.
	keepsRunning bool
}

// SandboxOptions choose the attack × sandbox matrix.
type SandboxOptions struct {
	// Sandboxes are the columns, in order (see backends.Resolve).
	Sandboxes []backends.Sandbox
	// Only and Suites choose the attacks, as in Options.
	Only   []string
	Suites []vocab.Suite
	// Progress, when set, is called after each cell, and Column after
	// each column (a skipped one included).
	Progress func(report.SandboxCell)
	Column   func(report.Sandbox)
	// TempDir is where each cell's fixtures are made, as in Options.
	TempDir string
}

// Cells returns how many cells opts select (a column that turns out to
// be skipped has none), or the error RunSandboxes would give for a bad
// selection.
func (opts SandboxOptions) Cells() (int, error) {
	list, _, err := Options{Only: opts.Only, Suites: opts.Suites}.selection()
	return len(list) * len(opts.Sandboxes), err
}

// refused begins the mechanism env.run names for a run the sandbox
// refused (fail closed).
const refused = "refused: "

// RunSandboxes runs the attacks under each sandbox, one cell at a time,
// and returns the matrix. A sandboxlab:L<n> column runs each attack as
// the level matrix does, at that level whatever its suite; a backend's
// column runs the same programs through the backend's command and judges
// them by the same host-side evidence. A backend that is not installed,
// or that does not run the harness's probe, is a skipped column with the
// reason. When ctx is cancelled it cleans the current cell up and
// returns ctx.Err().
func RunSandboxes(ctx context.Context, opts SandboxOptions) (*report.Sandboxes, error) {
	list, _, err := Options{Only: opts.Only, Suites: opts.Suites}.selection()
	if err != nil {
		return nil, err
	}
	if len(opts.Sandboxes) == 0 {
		return nil, fmt.Errorf("%w: no sandbox given", ErrUsage)
	}
	if err := prepare(&opts.TempDir); err != nil {
		return nil, err
	}
	rep := &report.Sandboxes{
		Identity: report.Identity{UID: os.Geteuid(), Root: sandbox.HostRoot(), ProgramUID: sandbox.HostIdentity().UID},
		Defect:   string(mutants.Active()),
		Suites:   map[string]vocab.Suite{},
		Cells:    []report.SandboxCell{},
	}
	for _, a := range list {
		rep.Attacks = append(rep.Attacks, a.id)
		rep.Suites[a.id] = a.suite
	}
	used := map[string]int{}
	for _, sb := range opts.Sandboxes {
		name := sb.Name()
		if used[name]++; used[name] > 1 {
			name += "-" + strconv.Itoa(used[name]) // a second custom prefix
		}
		began := time.Now()
		col, cells, err := runColumn(ctx, sb, name, list, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		col.MS = time.Since(began).Milliseconds()
		if opts.Column != nil {
			opts.Column(col)
		}
		rep.Sandboxes = append(rep.Sandboxes, col)
		rep.Cells = append(rep.Cells, cells...)
	}
	return rep, nil
}

// runColumn runs every attack of list under one sandbox. A backend's
// column is closed at its end, whatever happened (a throw-away user, a
// guest's kernel and initrd are removed).
func runColumn(ctx context.Context, sb backends.Sandbox, name string, list []*spec, opts SandboxOptions) (col report.Sandbox, cells []report.SandboxCell, err error) {
	col = report.Sandbox{Name: name, Spec: sb.Spec}
	cell := func(a *spec) (report.SandboxCell, error) { return ownCell(ctx, a, sb.Level, name, opts.TempDir) }
	if sb.Profile == nil {
		col.About = fmt.Sprintf("sandboxlab's own level L%d, as the level matrix runs it", sb.Level)
	} else {
		b, err := readyBackend(ctx, sb.Profile, &col, opts.TempDir)
		if err != nil || b == nil {
			return col, nil, err
		}
		defer func() {
			if cerr := b.close(); cerr != nil {
				err = errors.Join(err, fmt.Errorf("closing the column: %w", cerr))
			}
		}()
		cell = func(a *spec) (report.SandboxCell, error) { return b.cell(ctx, a, name, opts.TempDir) }
	}
	for _, a := range list {
		if err := ctx.Err(); err != nil {
			return col, nil, err
		}
		c, err := cell(a)
		if err != nil {
			return col, nil, fmt.Errorf("%s: %w", a.id, err)
		}
		cells = append(cells, c)
		if opts.Progress != nil {
			opts.Progress(c)
		}
	}
	return col, cells, nil
}

// ownCell runs attack a at sandboxlab's own level, as the level matrix
// does, and words the cell for the sandbox matrix.
func ownCell(ctx context.Context, a *spec, level int, column, tempDir string) (report.SandboxCell, error) {
	var cell report.Cell
	var err error
	onOwnThread(func() { cell, err = runCell(ctx, a, level, Options{TempDir: tempDir}, nil) })
	if err != nil {
		return report.SandboxCell{}, err
	}
	c := report.SandboxCell{Attack: a.id, Sandbox: column, State: report.Stopped, Mechanism: cell.StoppedBy, Evidence: cell.Evidence, MS: cell.MS}
	switch {
	case cell.NA != "":
		c.State, c.Mechanism, c.Evidence = report.NotApplicable, "", "not run: "+cell.NA
	case cell.Escaped:
		c.State, c.Mechanism = report.Escaped, ""
	case strings.HasPrefix(cell.StoppedBy, refused):
		// Fail closed: nothing ran, so nothing was stopped.
		c.State, c.Mechanism, c.Evidence = report.NotApplicable, "", "not run: sandboxlab refused the level on this machine: "+cell.Evidence
	}
	return c, nil
}
