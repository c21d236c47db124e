package checks

// The scripted agent: a deterministic stand-in for a model, used to show
// what a tool's reply and description are worth. It reads only what a
// model reads (the description and each reply's text, never a Result or
// the reply's structured status) and reacts to what they say by fixed
// rules. It cannot read intent from prose, and it makes none of the
// mistakes a model would make beyond the first attempt each task scripts.

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"sandboxlab/report"
	"sandboxlab/sandbox"
	"sandboxlab/sandbox/tool"
)

// agentLevel is the level every agent session runs at: the full sandbox,
// as an agent would get it.
const agentLevel = 5

// agentMaxCalls bounds the calls the agent makes on one task.
const agentMaxCalls = 6

// agentTask is one task: the programs the agent writes first, the fixes it
// knows, and the check of its final answer.
type agentTask struct {
	name string
	// problem is what goes wrong on the first attempt, in the notes' words.
	problem string
	// steps are the agent's first program for each step of the task. Each
	// step is a call of its own, in order: the state task needs a value
	// from its first step in its second.
	steps []string
	// faster is the program the agent writes when a reply says a run was
	// too slow, leaner the one when a reply says memory ran out ("": the
	// agent knows no such fix).
	faster, leaner string
	// want is the correct answer: the last line the final step prints.
	want string
	// notInFinal is text the final program must not contain: the state
	// task's second step must use the value, not compute it again.
	notInFinal string
}

// verify is the task's judgement of the agent's final program and answer.
func (t agentTask) verify(finalCode, answer string) bool {
	return answer == t.want && (t.notInFinal == "" || !strings.Contains(finalCode, t.notInFinal))
}

// agentTasks are the notes' four tasks, each with what goes wrong on the
// agent's first attempt.
var agentTasks = []agentTask{
	{
		// A misspelled variable: a NameError.
		name:    "typo",
		problem: "a NameError",
		steps:   []string{"numbers = range(1, 11)\ntotal = sum(n * n for n in numbres)\nprint(total)\n"},
		want:    "385",
	},
	{
		// A loop over ten billion numbers does not finish: a timeout.
		name:    "slow",
		problem: "a loop that does not finish",
		steps:   []string{"total = 0\nfor i in range(10**10):\n    total += i\nprint(total)\n"},
		faster:  "n = 10**10\nprint(n * (n - 1) // 2)\n",
		want:    "49999999995000000000",
	},
	{
		// A value computed in one call and used in the next: the variable
		// does not survive.
		name:    "state",
		problem: "a variable that does not survive",
		steps: []string{
			"x = sum(i * i for i in range(1, 1001))\nprint(\"computed\")\n",
			"print(x * 2)\n",
		},
		want:       "667667000",
		notInFinal: "sum(i * i",
	},
	{
		// Counting by building a billion-item list: out of memory.
		name:    "memory",
		problem: "out of memory",
		steps:   []string{"numbers = list(range(1, 10**9 + 1))\nprint(sum(1 for n in numbers if n % 3 == 0 or n % 5 == 0))\n"},
		leaner:  "n = 10**9\nprint(n // 3 + n // 5 - n // 15)\n",
		want:    "466666667",
	},
}

// RunAgent runs the scripted agent on each task with the careful and the
// naive tool, and on the state task with a careful tool whose description
// only says "run some code". Each run gets a session of its own at level
// 5, closed before the next. The error is an internal one (the sandbox
// could not run); an unsolved task is a row, not an error.
func RunAgent(ctx context.Context) (*report.Agent, error) {
	return runAgentTable(ctx, "")
}

// runAgentTable is RunAgent with the sessions made below root ("" for the
// sandbox's default), so that a test can check that none is left behind.
func runAgentTable(ctx context.Context, root string) (*report.Agent, error) {
	rep := &report.Agent{Rows: []report.AgentRow{}}
	careful := func(s *sandbox.Session) tool.Tool { return tool.NewCareful(s) }
	naive := func(s *sandbox.Session) tool.Tool { return tool.NewNaive(s) }
	// What the notes report: the careful tool solves every task, the
	// naive tool none, and the vague description loses the state task.
	solved, unsolved := true, false
	for _, task := range agentTasks {
		for _, tl := range []struct {
			mk     func(*sandbox.Session) tool.Tool
			expect *bool
		}{{careful, &solved}, {naive, &unsolved}} {
			row, err := runAgentSession(ctx, root, task, tl.mk)
			if err != nil {
				return nil, err
			}
			row.ExpectSolved = tl.expect
			rep.Rows = append(rep.Rows, row)
		}
	}
	state, err := agentTaskNamed("state")
	if err != nil {
		return nil, err
	}
	vague := func(s *sandbox.Session) tool.Tool { return tool.NewCarefulWithDescription(s, tool.VagueDescription) }
	if rep.Vague, err = runAgentSession(ctx, root, state, vague); err != nil {
		return nil, err
	}
	rep.Vague.ExpectSolved = &unsolved
	return rep, nil
}

func agentTaskNamed(name string) (agentTask, error) {
	for _, t := range agentTasks {
		if t.name == name {
			return t, nil
		}
	}
	return agentTask{}, fmt.Errorf("agent: no task %q", name)
}

// runAgentSession runs one task with the tool mk makes over a fresh
// session, and closes the session.
func runAgentSession(ctx context.Context, root string, task agentTask, mk func(*sandbox.Session) tool.Tool) (row report.AgentRow, err error) {
	s, err := sandbox.NewSession(sandbox.Options{Policy: sandbox.MustPreset(agentLevel), Root: root})
	if err != nil {
		return row, fmt.Errorf("agent: %s: %w", task.name, err)
	}
	defer func() {
		if cerr := s.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("agent: %s: %w", task.name, cerr)
		}
	}()
	t := mk(s)
	row, err = runAgentTask(ctx, t, task)
	if err != nil {
		return row, fmt.Errorf("agent: %s with the %s tool: %w", task.name, t.Name(), err)
	}
	return row, nil
}

// runAgentTask is the agent itself. Its rules, in order of the reply's
// clue:
//   - output and no error: go on to the next step, or give the last line
//     of the output as the answer after the final step;
//   - a name not defined that an earlier call defined: the value did not
//     survive. If the description says files survive, save it to a file
//     in the call that computes it and read it back in the call that uses
//     it; otherwise redo the call that computed it, in case it did not take;
//   - a name not defined that no call defined: a typo; use the name
//     Python suggests, or the closest name the program assigns;
//   - a time or CPU limit: write the faster program; out of memory: the
//     leaner one;
//   - an empty reply: nothing to go on, so run the same program again;
//   - anything else, or a clue seen before: give up.
func runAgentTask(ctx context.Context, t tool.Tool, task agentTask) (report.AgentRow, error) {
	row := report.AgentRow{Task: task.name, Tool: t.Name(), Problem: task.problem}
	// ask is all the agent sees of a call: the reply's text.
	ask := func(code string) (string, error) {
		r, err := t.Call(ctx, code)
		return r.Text, err
	}
	filesSurvive := agentFilesSurvive(t.Description())
	steps := append([]string(nil), task.steps...)
	step := 0
	madeBy := map[string]int{} // variable → step whose program assigned it and ran
	seen := map[string]bool{}  // clues already acted on
	lost := map[string]bool{}  // variables redone because nothing said how to keep them
	for row.Calls < agentMaxCalls {
		code := steps[step]
		text, err := ask(code)
		row.Calls++
		if err != nil {
			return row, err
		}
		c := agentReadReply(text)
		if c.kind != agentOK && seen[c.key()] {
			switch {
			case c.kind == agentEmpty:
				row.Ended = "empty reply, no clue"
			case c.kind == agentUndefined && lost[c.name]:
				row.Ended = fmt.Sprintf("%s lost between calls again; nothing says what survives a call", c.name)
			default:
				row.Ended = c.summary + " again"
			}
			return row, nil
		}
		seen[c.key()] = true
		switch c.kind {
		case agentOK:
			for _, name := range agentAssigned(code) {
				madeBy[name] = step
			}
			if step < len(steps)-1 {
				step++
				continue
			}
			answer := agentLastLine(c.output)
			row.Solved = task.verify(code, answer)
			row.Ended = "answer verified"
			if !row.Solved {
				row.Ended = fmt.Sprintf("wrong answer %q", answer)
			}
			return row, nil
		case agentEmpty:
			// Run it again: the agent cannot tell a failure from a program
			// that printed nothing.
		case agentUndefined:
			if k, ok := madeBy[c.name]; ok && k < step {
				if filesSurvive {
					steps[k] += agentSave(c.name)
					steps[step] = agentLoad(c.name) + steps[step]
				} else {
					lost[c.name] = true
				}
				step = k
				continue
			}
			fixed, ok := agentFixTypo(code, c.name, c.suggestion)
			if !ok {
				row.Ended = "no fix known for " + c.summary
				return row, nil
			}
			steps[step] = fixed
		case agentTooSlow, agentMemory:
			fix := task.faster
			if c.kind == agentMemory {
				fix = task.leaner
			}
			if fix == "" {
				row.Ended = "no fix known for " + c.summary
				return row, nil
			}
			steps[step] = fix
		default:
			row.Ended = "no fix known for " + c.summary
			return row, nil
		}
	}
	row.Ended = fmt.Sprintf("no answer within %d calls", agentMaxCalls)
	return row, nil
}

// agentClueKind is what the agent makes of a reply.
type agentClueKind int

const (
	agentOK        agentClueKind = iota // output, no sign of an error
	agentEmpty                          // nothing at all
	agentUndefined                      // NameError: name '…' is not defined
	agentTooSlow                        // a time or CPU limit
	agentMemory                         // out of memory
	agentOther                          // another error the agent has no rule for
)

// agentClue is one reply as the agent reads it.
type agentClue struct {
	kind       agentClueKind
	name       string // the undefined name
	suggestion string // the name Python suggests instead ("Did you mean")
	output     string // the program's standard output, for agentOK
	summary    string // a few words for the report
}

// key identifies a clue, so that the agent notices it coming back.
func (c agentClue) key() string { return fmt.Sprintf("%d/%s", c.kind, c.name) }

var agentNameError = regexp.MustCompile(`NameError: name '(\w+)' is not defined(?:\. Did you mean: '(\w+)'\?)?`)

// agentReadReply reads a reply's text the way the scripted model does: by
// looking for words, in the order of the rules.
func agentReadReply(text string) agentClue {
	lower := strings.ToLower(text)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(lower, w) {
				return true
			}
		}
		return false
	}
	switch m := agentNameError.FindStringSubmatch(text); {
	case strings.TrimSpace(text) == "":
		return agentClue{kind: agentEmpty, summary: "an empty reply"}
	case m != nil:
		return agentClue{kind: agentUndefined, name: m[1], suggestion: m[2], summary: fmt.Sprintf("name '%s' is not defined", m[1])}
	case has("time limit", "timed out", "cpu limit", "took too long"):
		return agentClue{kind: agentTooSlow, summary: "a time limit"}
	case has("out of memory", "memoryerror"):
		return agentClue{kind: agentMemory, summary: "out of memory"}
	case has("too many processes"):
		return agentClue{kind: agentOther, summary: "too many processes"}
	case has("not run"):
		return agentClue{kind: agentOther, summary: "a refused run"}
	case strings.HasPrefix(text, "Error") || has("traceback (most recent call last)"):
		return agentClue{kind: agentOther, summary: "an error"}
	}
	return agentClue{kind: agentOK, output: agentOutput(text)}
}

// agentOutput returns the program's standard output from a reply: the
// quoted lines of the careful tool's stdout section, or, in a reply
// without sections (the naive tool's), the whole text.
func agentOutput(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if l == "stdout: empty" {
			return ""
		}
		if !strings.HasPrefix(l, "stdout (") {
			continue
		}
		var out []string
		for _, q := range lines[i+1:] {
			rest, ok := strings.CutPrefix(q, "| ")
			if !ok {
				break
			}
			out = append(out, rest)
		}
		return strings.Join(out, "\n")
	}
	return text
}

// agentLastLine is the agent's answer: the last non-empty line printed.
func agentLastLine(output string) string {
	lines := strings.Split(strings.TrimSpace(output), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// agentFilesSurvive reports whether a description tells the agent that
// files outlive a call: the only way it knows to keep a value.
func agentFilesSurvive(description string) bool {
	return agentFilesSurviveWords.MatchString(strings.ToLower(description))
}

var agentFilesSurviveWords = regexp.MustCompile(`files? (survive|persist|are kept)`)

var agentAssignment = regexp.MustCompile(`(?m)^([A-Za-z_]\w*)\s*=[^=]`)

// agentAssigned returns the names a program assigns at its top level.
func agentAssigned(code string) []string {
	var names []string
	for _, m := range agentAssignment.FindAllStringSubmatch(code, -1) {
		names = append(names, m[1])
	}
	return names
}

// agentSave is the line the agent adds to keep name for a later call.
func agentSave(name string) string {
	return fmt.Sprintf("with open(%q, \"w\") as f:\n    f.write(repr(%s))\n", name+".txt", name)
}

// agentLoad is the line the agent puts first to read name back.
func agentLoad(name string) string {
	return fmt.Sprintf("import ast\nwith open(%q) as f:\n    %s = ast.literal_eval(f.read())\n", name+".txt", name)
}

// agentFixTypo replaces the undefined name with the one Python suggests,
// if the program assigns it, or else with the assigned name at the
// smallest edit distance (at most 2).
func agentFixTypo(code, name, suggestion string) (string, bool) {
	best, bestDist := "", 3
	for _, a := range agentAssigned(code) {
		if a == suggestion {
			best = a
			break
		}
		if d := agentEditDistance(a, name); d < bestDist {
			best, bestDist = a, d
		}
	}
	if best == "" {
		return "", false
	}
	word := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
	return word.ReplaceAllLiteralString(code, best), true
}

// agentEditDistance is the Levenshtein distance between a and b.
func agentEditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
