package attacks

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"sandboxlab/report"
	"sandboxlab/sandbox"
	vocab "sandboxlab/verdict"
)

// Options choose the part of the matrix to run.
type Options struct {
	// Only lists the attacks to run (nil: all of the suites), reported in
	// matrix order.
	Only []string
	// Suites lists the suites whose attacks run (nil: all).
	Suites []vocab.Suite
	// Levels lists the levels to run (nil: every level), reported in
	// ascending order. Each attack runs at those its suite has: the
	// course's at L0–L5 only.
	Levels []int
	// Progress, when set, is called after each cell with its verdict.
	Progress func(report.Cell)
	// Without names a layer (sandbox.Layers) taken away from every
	// level's policy: the masking search's variant of a cell.
	Without string
	// TempDir is where each cell's fixture directory is made (default
	// evidence.FixtureRoot()). The program's host identity must be able to pass
	// through it.
	TempDir string
	// Queue is how the cells' sessions use the host's run slots, and
	// Observe, if set, is given each of their Results (sandbox.Options).
	Queue   sandbox.Queue
	Observe func(*sandbox.Result)
}

// ErrUsage wraps every error about a bad attack id or level.
var ErrUsage = errors.New("invalid selection")

// ParseOnly parses a comma-separated list of attack ids ("" means all).
func ParseOnly(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var ids []string
	for _, f := range strings.Split(s, ",") {
		id := strings.TrimSpace(f)
		if !known(id) {
			return nil, fmt.Errorf("%w: unknown attack %q (known: %s)", ErrUsage, id, strings.Join(sortedIDs(), ", "))
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// ParseLevels parses a level selection: comma-separated levels and
// ranges, such as "0-5", "3" or "0,2,4-5" ("" means all).
func ParseLevels(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	bad := func(part, why string) error {
		return fmt.Errorf("%w: %s %s (want levels 0 to %d and ranges, such as 0-5 or 2,4)", ErrUsage, part, why, sandbox.Levels-1)
	}
	level := func(part string) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return 0, bad(strconv.Quote(part), "is not a level")
		}
		if n < 0 || n >= sandbox.Levels {
			return 0, bad(strconv.Quote(part), "is out of range")
		}
		return n, nil
	}
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := level(lo)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = level(hi); err != nil {
				return nil, err
			}
			if b < a {
				return nil, bad(strconv.Quote(part), "runs backwards")
			}
		}
		for n := a; n <= b; n++ {
			seen[n] = true
		}
	}
	levels := make([]int, 0, len(seen))
	for n := range seen {
		levels = append(levels, n)
	}
	sort.Ints(levels)
	return levels, nil
}

// Cells returns how many cells opts select, or the error Run would give
// for a bad selection.
func (opts Options) Cells() (int, error) {
	list, levels, err := opts.selection()
	n := 0
	for _, a := range list {
		n += len(a.levels(levels))
	}
	return n, err
}

// levels returns those of levels that the attack's suite has.
func (s *spec) levels(levels []int) []int {
	var out []int
	for _, l := range levels {
		if s.suite.HasLevel(l) {
			out = append(out, l)
		}
	}
	return out
}

// selection returns the attacks and levels opts ask for, in report order.
func (opts Options) selection() ([]*spec, []int, error) {
	want := map[string]bool{}
	for _, id := range opts.Only {
		if !known(id) {
			return nil, nil, fmt.Errorf("%w: unknown attack %q (known: %s)", ErrUsage, id, strings.Join(sortedIDs(), ", "))
		}
		if s := registry[id].suite; !s.In(opts.Suites) {
			return nil, nil, fmt.Errorf("%w: attack %s is in the %s suite, which is not selected (suites: %s)", ErrUsage, id, s, vocab.SuiteList(opts.Suites))
		}
		want[id] = true
	}
	var list []*spec
	for _, id := range order {
		if registry[id].suite.In(opts.Suites) && (len(want) == 0 || want[id]) {
			list = append(list, registry[id])
		}
	}
	seen := map[int]bool{}
	for _, n := range opts.Levels {
		if n < 0 || n >= sandbox.Levels {
			return nil, nil, fmt.Errorf("%w: level %d: want 0 to %d", ErrUsage, n, sandbox.Levels-1)
		}
		seen[n] = true
	}
	var levels []int
	for n := range sandbox.Levels {
		if len(seen) == 0 || seen[n] {
			levels = append(levels, n)
		}
	}
	return list, levels, nil
}
