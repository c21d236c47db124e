package report

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestKillLateTable: the text report gives each level's kills at the
// time limit, the baseline's apart from the defects', and for the runs
// the init stopped how late the init itself woke; a row without such
// runs says so with a dash, and a side without runs has no row; the
// latest kills of a level are named after the table.
func TestKillLateTable(t *testing.T) {
	m := fixtureMutation()
	m.Run = &RunInfo{KillLate: []KillLate{
		{Level: 1, BaselineMS: []int64{30, 40}, DefectsMS: []int64{}},
		{Level: 6, BaselineMS: []int64{5, 12, 300}, DefectsMS: []int64{8}, BaselineInitMS: []int64{1, 3}, BaselineBackstop: 1,
			Latest: []LateKill{{Probe: "runaway_loop@L6", LateMS: 300, Backstop: true}, {Probe: "wall_timeout", Defect: "no_seccomp", LateMS: 8, InitLateMS: new(int64(3)), Starved: true}}},
	}}
	out := renderWide(t, Text, m)
	var rows []string
	for _, line := range strings.Split(out, "\n") {
		cells := strings.Split(line, "│")
		if len(cells) > 2 && strings.HasPrefix(strings.TrimSpace(cells[1]), "L") {
			var f []string
			for _, c := range cells[1 : len(cells)-1] {
				f = append(f, strings.TrimSpace(c))
			}
			rows = append(rows, strings.Join(f, "|"))
		}
	}
	assert.Check(t, is.DeepEqual(rows, []string{
		"L1|baseline|2|30 ms|40 ms|40 ms|0|-",
		"L6|baseline|3|12 ms|300 ms|300 ms|1|2: 1/3/3 ms",
		"L6|defects|1|8 ms|8 ms|8 ms|0|-",
	}))
	assert.Check(t, is.Contains(out, "how late the init itself woke"))
	assert.Check(t, is.Contains(out, "Latest at L6: runaway_loop@L6 300 ms (by the backstop), wall_timeout under no_seccomp 8 ms (init woke 3 ms late, starved)."))
	assert.Check(t, !strings.Contains(out, "Latest at L1"))
}
