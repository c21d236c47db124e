package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/report"
)

// TestAgentTable pins the notes' table: the careful tool solves typo in 2
// calls, slow in 2, state in 4 and memory in 2; the naive tool solves
// none; with a description that only says "run some code" the state task
// fails. It also checks that every session the agent made is gone.
func TestAgentTable(t *testing.T) {
	root, err := os.MkdirTemp("", "sandboxlab-agent-test-")
	assert.NilError(t, err)
	defer os.RemoveAll(root)
	assert.NilError(t, os.Chmod(root, 0o711)) // the program's identity must reach its session

	got, err := runTable(context.Background(), root, nil)
	assert.NilError(t, err)
	assert.DeepEqual(t, got, notesTable())

	left, _ := filepath.Glob(filepath.Join(root, "*"))
	assert.Check(t, is.Len(left, 0), "sessions left behind: %v", left)
}

// notesTable is the notes' table, as the agent must make it.
func notesTable() *report.Agent {
	want := &report.Agent{
		Rows: []report.AgentRow{
			{Task: "typo", Tool: "careful", Solved: true, Calls: 2, Ended: "answer verified"},
			{Task: "typo", Tool: "naive", Solved: false, Calls: 2, Ended: "empty reply, no clue"},
			{Task: "slow", Tool: "careful", Solved: true, Calls: 2, Ended: "answer verified"},
			{Task: "slow", Tool: "naive", Solved: false, Calls: 2, Ended: "empty reply, no clue"},
			{Task: "state", Tool: "careful", Solved: true, Calls: 4, Ended: "answer verified"},
			{Task: "state", Tool: "naive", Solved: false, Calls: 3, Ended: "empty reply, no clue"},
			{Task: "memory", Tool: "careful", Solved: true, Calls: 2, Ended: "answer verified"},
			{Task: "memory", Tool: "naive", Solved: false, Calls: 2, Ended: "empty reply, no clue"},
		},
		Vague: report.AgentRow{Task: "state", Tool: "careful", Solved: false, Calls: 4,
			Ended: "x lost between calls again; nothing says what survives a call"},
	}
	yes, no := true, false
	for i := range want.Rows {
		want.Rows[i].Problem = tasks[i/2].problem
		want.Rows[i].ExpectSolved = map[string]*bool{"careful": &yes, "naive": &no}[want.Rows[i].Tool]
	}
	want.Vague.Problem, want.Vague.ExpectSolved = "a variable that does not survive", &no
	return want
}

// TestAgentVerifiesAnswers checks the tasks' judgement, so that a table of
// "solved" means the answers were right: a wrong number fails, and the
// state task refuses a final program that computes the value again.
func TestAgentVerifiesAnswers(t *testing.T) {
	for _, task := range tasks {
		final := task.steps[len(task.steps)-1]
		assert.Check(t, task.verify(final, task.want), task.name)
		assert.Check(t, !task.verify(final, task.want+"0"), task.name)
	}
	state, err := taskNamed("state")
	assert.NilError(t, err)
	assert.Check(t, !state.verify(state.steps[0]+state.steps[1], state.want), "recomputing in the last call must not count")
}
