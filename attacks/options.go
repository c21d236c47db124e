package attacks

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"sandboxlab/report"
	"sandboxlab/sandbox"
)

// Options choose the part of the matrix to run.
type Options struct {
	// Only lists the attacks to run (nil: all), reported in matrix order.
	Only []string
	// Levels lists the levels to run (nil: 0 to 5), reported in ascending order.
	Levels []int
	// Progress, when set, is called after each cell with its verdict.
	Progress func(report.Cell)
	// TempDir is where each cell's fixture directory is made (default
	// evidence.FixtureRoot()). The program's host identity must be able to pass
	// through it.
	TempDir string
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

// selection returns the attacks and levels opts ask for, in report order.
func (opts Options) selection() ([]*spec, []int, error) {
	want := map[string]bool{}
	for _, id := range opts.Only {
		if !known(id) {
			return nil, nil, fmt.Errorf("%w: unknown attack %q (known: %s)", ErrUsage, id, strings.Join(sortedIDs(), ", "))
		}
		want[id] = true
	}
	var list []*spec
	for _, id := range order {
		if len(want) == 0 || want[id] {
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
