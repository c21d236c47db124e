package report

import (
	"fmt"
	"io"
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
}

// Result words the row's outcome as the notes' table does.
func (r AgentRow) Result() string {
	if r.Solved {
		return fmt.Sprintf("solved in %d calls", r.Calls)
	}
	return fmt.Sprintf("not solved (%d calls: %s)", r.Calls, r.Ended)
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

// Tables renders one row per task with a column per tool, then the
// vague-description result on a line of its own.
func (a *Agent) Tables(w io.Writer, md bool) error {
	var tasks, tools []string
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
	rows := make([][]string, 0, len(tasks))
	for _, task := range tasks {
		row := []string{task}
		for _, tool := range tools {
			cell := "not run"
			if r, ok := a.Row(task, tool); ok {
				cell = r.Result()
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	if err := table(w, md, append([]string{"task"}, tools...), rows); err != nil {
		return err
	}
	sep := "\n"
	if md {
		sep = "\n\n"
	}
	_, err := fmt.Fprintf(w, "%sWith a description that only says \"run some code\", the %s tool: %s %s.\n",
		sep, a.Vague.Tool, a.Vague.Task, a.Vague.Result())
	return err
}
