package report

import (
	"fmt"
	"io"
	"strings"
)

// AgentRow is one run of the scripted agent: one task with one tool.
type AgentRow struct {
	// Task names the task ("typo", "slow", "state", "memory").
	Task string `json:"task"`
	// Tool names the tool ("careful", "naive", or the careful tool with a
	// vague description).
	Tool string `json:"tool"`
	// Solved is true when the task verified the agent's final answer.
	Solved bool `json:"solved"`
	// Calls is how many calls the agent made, the last one included.
	Calls int `json:"calls"`
	// Ended says why the agent stopped, in a few words ("answer verified",
	// "empty reply, no clue").
	Ended string `json:"ended"`
	// Problem says what goes wrong on the agent's first attempt ("a
	// NameError"); "" falls back to the notes' wording for their four
	// tasks.
	Problem string `json:"problem,omitempty"`
	// ExpectSolved is what the course notes report for this task and tool,
	// when the producer says: JUnit fails a row that differs. Nil: no
	// expectation, nothing to fail.
	ExpectSolved *bool `json:"expect_solved,omitempty"`
}

// Result words the row's outcome as the notes' table does.
func (r AgentRow) Result() string {
	if r.Solved {
		return fmt.Sprintf("solved in %d calls", r.Calls)
	}
	return fmt.Sprintf("not solved (%d calls: %s)", r.Calls, r.Ended)
}

// problem is what goes wrong in the task, in the notes' words unless the
// producer said otherwise.
func (r AgentRow) problem() string {
	if r.Problem != "" {
		return r.Problem
	}
	return notesProblems[r.Task]
}

// notesProblems is the "What goes wrong" column of the notes' table (part
// 4), for rows whose producer leaves Problem empty.
var notesProblems = map[string]string{
	"typo":   "a NameError",
	"slow":   "a loop that does not finish",
	"state":  "a variable that does not survive",
	"memory": "out of memory",
}

// Agent is the report of 'sandboxlab agent': each task with each tool,
// and the state task once more with a careful tool whose description only
// says "run some code".
type Agent struct {
	// Rows holds one row per task and tool, tasks in the order they ran.
	Rows []AgentRow `json:"rows"`
	// Vague is the state task with the vague description.
	Vague AgentRow `json:"vague"`
}

// Row returns the row for task and tool, if it was run.
func (a *Agent) Row(task, tool string) (AgentRow, bool) {
	for _, r := range a.Rows {
		if r.Task == task && r.Tool == tool {
			return r, true
		}
	}
	return AgentRow{}, false
}

// tasksAndTools returns the tasks and the tools in the order they ran.
func (a *Agent) tasksAndTools() (tasks, tools []string) {
	seenTask, seenTool := map[string]bool{}, map[string]bool{}
	for _, r := range a.Rows {
		if !seenTask[r.Task] {
			seenTask[r.Task] = true
			tasks = append(tasks, r.Task)
		}
		if !seenTool[r.Tool] {
			seenTool[r.Tool] = true
			tools = append(tools, r.Tool)
		}
	}
	return tasks, tools
}

// vagueLabel says what is wrong in the vague-description run.
const vagueLabel = `description only says "run some code"`

// Tables renders the notes' table: one row per task with what goes wrong
// and a column per tool ("solved in N calls"), and a last row for the
// state task run with the vague description.
func (a *Agent) Tables(w io.Writer, md bool) error {
	p := newPrinter(w, md)
	tasks, tools := a.tasksAndTools()
	header := []string{"Task", "What goes wrong"}
	for _, tool := range tools {
		header = append(header, toolHeading(tool))
	}
	rows := make([][]string, 0, len(tasks)+1)
	for _, task := range tasks {
		row := []string{task, ""}
		for _, tool := range tools {
			cell := "not run"
			if r, ok := a.Row(task, tool); ok {
				cell = r.Result()
				if row[1] == "" {
					row[1] = r.problem()
				}
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	if v := a.Vague; v.Task != "" {
		row := []string{v.Task + ", vague description", vagueLabel}
		placed := false
		for _, tool := range tools {
			if tool == v.Tool {
				row, placed = append(row, v.Result()), true
			} else {
				row = append(row, "-")
			}
		}
		if !placed { // a tool the main table does not have: give it a column
			header = append(header, toolHeading(v.Tool))
			for i := range rows {
				rows[i] = append(rows[i], "-")
			}
			row = append(row, v.Result())
		}
		rows = append(rows, row)
	}
	p.table(header, rows)
	if v := a.Vague; v.Task != "" {
		p.printf("The last row is the %s task again with the %s tool, its description saying only \"run some code\": it is %s.\n",
			v.Task, v.Tool, yesNo(v.Solved, "solved", "not solved"))
	}
	return p.err
}

// toolHeading turns a tool name into its column heading: "careful" →
// "Careful tool", as the notes write it.
func toolHeading(tool string) string {
	if tool == "" {
		return "tool"
	}
	return strings.ToUpper(tool[:1]) + tool[1:] + " tool"
}
