// Package agent is the scripted agent: a deterministic stand-in for a
// model, used to show what a tool's reply and description are worth. It
// reads only what a model reads (the description and each reply's text,
// never a Result or the reply's structured status) and reacts to what
// they say by fixed rules. It cannot read intent from prose, and it makes
// none of the mistakes a model would make beyond the first attempt each
// task scripts.
//
// It runs the notes' four tasks with the careful and the naive tool of
// sandbox/tool, in level-5 sessions, and returns the task × tool table
// as a report.Agent. It imports the sandbox, its tool and report; nothing
// of the harness.
package agent

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"sandboxlab/report"
	"sandboxlab/sandbox"
	"sandboxlab/sandbox/tool"
)

// level is the level every agent session runs at: the full sandbox,
// as an agent would get it.
const level = 5

// Level is the level an Opener's sessions must have.
const Level = level

// Opener opens the careful tool in a fresh session of its own, for one
// task, and returns it with what closes the session.
type Opener func(ctx context.Context) (tool.Tool, func() error, error)

// maxCalls bounds the calls the agent makes on one task.
const maxCalls = 6

// task is one task: the programs the agent writes first, the fixes it
// knows, and the check of its final answer.
type task struct {
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
func (t task) verify(finalCode, answer string) bool {
	return answer == t.want && (t.notInFinal == "" || !strings.Contains(finalCode, t.notInFinal))
}

// tasks are the notes' four tasks, each with what goes wrong on the
// agent's first attempt.
var tasks = []task{
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

// Run runs the scripted agent on each task with the careful and the
// naive tool, and on the state task with a careful tool whose description
// only says "run some code". Each run gets a session of its own at level
// 5, closed before the next. The error is an internal one (the sandbox
// could not run); an unsolved task is a row, not an error.
func Run(ctx context.Context) (*report.Agent, error) {
	return runTable(ctx, "", nil)
}

// RunVia is Run with the careful tool's rows, and the vague description's,
// through open (the careful tool served over MCP, for one), whose
// sessions are at Level: the table must come out as Run's does. The naive
// rows run in this process, as in Run: a server serves the careful tool
// only.
func RunVia(ctx context.Context, open Opener) (*report.Agent, error) {
	return runTable(ctx, "", open)
}

// runTable is RunVia (Run when open is nil) with the in-process sessions
// made below root ("" for the sandbox's default), so that a test can
// check that none is left behind.
func runTable(ctx context.Context, root string, open Opener) (*report.Agent, error) {
	rep := &report.Agent{Rows: []report.AgentRow{}}
	careful := local(root, func(s *sandbox.Session) tool.Tool { return tool.NewCareful(s) })
	vague := local(root, func(s *sandbox.Session) tool.Tool { return tool.NewCarefulWithDescription(s, tool.VagueDescription) })
	if open != nil {
		careful = open
		vague = func(ctx context.Context) (tool.Tool, func() error, error) {
			t, closeFn, err := open(ctx)
			return described{t, tool.VagueDescription}, closeFn, err
		}
	}
	naive := local(root, func(s *sandbox.Session) tool.Tool { return tool.NewNaive(s) })
	// What the notes report: the careful tool solves every task, the
	// naive tool none, and the vague description loses the state task.
	solved, unsolved := true, false
	for _, tk := range tasks {
		for _, tl := range []struct {
			open   Opener
			expect *bool
		}{{careful, &solved}, {naive, &unsolved}} {
			row, err := runSession(ctx, tk, tl.open)
			if err != nil {
				return nil, err
			}
			row.ExpectSolved = tl.expect
			rep.Rows = append(rep.Rows, row)
		}
	}
	state, err := taskNamed("state")
	if err != nil {
		return nil, err
	}
	if rep.Vague, err = runSession(ctx, state, vague); err != nil {
		return nil, err
	}
	rep.Vague.ExpectSolved = &unsolved
	return rep, nil
}

// local opens the tool mk makes over a fresh level-5 session below root.
func local(root string, mk func(*sandbox.Session) tool.Tool) Opener {
	return func(context.Context) (tool.Tool, func() error, error) {
		s, err := sandbox.NewSession(sandbox.Options{Policy: sandbox.MustPreset(level), Root: root})
		if err != nil {
			return nil, nil, err
		}
		return mk(s), s.Close, nil
	}
}

// described is a tool with its description replaced: the vague
// description's experiment, for a tool made elsewhere.
type described struct {
	tool.Tool
	description string
}

func (d described) Description() string { return d.description }

func taskNamed(name string) (task, error) {
	for _, t := range tasks {
		if t.name == name {
			return t, nil
		}
	}
	return task{}, fmt.Errorf("agent: no task %q", name)
}

// runSession runs one task with the tool open opens in a fresh
// session, and closes the session.
func runSession(ctx context.Context, tk task, open Opener) (row report.AgentRow, err error) {
	t, closeSession, err := open(ctx)
	if err != nil {
		return row, fmt.Errorf("agent: %s: %w", tk.name, err)
	}
	defer func() {
		if cerr := closeSession(); err == nil && cerr != nil {
			err = fmt.Errorf("agent: %s: %w", tk.name, cerr)
		}
	}()
	row, err = runTask(ctx, t, tk)
	if err != nil {
		return row, fmt.Errorf("agent: %s with the %s tool: %w", tk.name, t.Name(), err)
	}
	return row, nil
}

// runTask is the agent itself. Its rules, in order of the reply's
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
func runTask(ctx context.Context, t tool.Tool, tk task) (report.AgentRow, error) {
	row := report.AgentRow{Task: tk.name, Tool: t.Name(), Problem: tk.problem}
	at := newAttempt(tk, filesSurvive(t.Description()))
	for row.Calls < maxCalls {
		code := at.steps[at.step]
		// The reply's text is all the agent sees of a call.
		r, err := t.Call(ctx, code)
		row.Calls++
		if err != nil {
			return row, err
		}
		if ended, solved := at.react(code, readReply(r.Text)); ended != "" {
			row.Ended, row.Solved = ended, solved
			return row, nil
		}
	}
	row.Ended = fmt.Sprintf("no answer within %d calls", maxCalls)
	return row, nil
}

// attempt is the agent's state on one task: the program of each step
// as it now stands and the step it is at, with what it remembers of the
// calls so far.
type attempt struct {
	tk task
	// filesSurvive: the tool's description says files outlive a call.
	filesSurvive bool
	steps        []string
	step         int
	madeBy       map[string]int  // variable → step whose program assigned it and ran
	seen         map[string]bool // clues already acted on
	lost         map[string]bool // variables redone because nothing said how to keep them
}

func newAttempt(tk task, filesSurvive bool) *attempt {
	return &attempt{tk: tk, filesSurvive: filesSurvive, steps: append([]string(nil), tk.steps...),
		madeBy: map[string]int{}, seen: map[string]bool{}, lost: map[string]bool{}}
}

// react applies the agent's rules to the clue of the reply to code: it
// changes the steps for the next call and returns "", or says how the
// task ended and whether it was solved.
func (at *attempt) react(code string, c clue) (ended string, solved bool) {
	if c.kind != clueOK && at.seen[c.key()] {
		return at.again(c), false
	}
	at.seen[c.key()] = true
	switch c.kind {
	case clueOK:
		return at.ranOK(code, c)
	case clueEmpty:
		// Run it again: the agent cannot tell a failure from a program
		// that printed nothing.
		return "", false
	case clueUndefined:
		return at.undefined(code, c), false
	case clueTooSlow, clueMemory:
		fix := at.tk.faster
		if c.kind == clueMemory {
			fix = at.tk.leaner
		}
		if fix != "" {
			at.steps[at.step] = fix
			return "", false
		}
	}
	return "no fix known for " + c.summary, false
}

// again is how the task ends on a clue the agent has acted on before.
func (at *attempt) again(c clue) string {
	switch {
	case c.kind == clueEmpty:
		return "empty reply, no clue"
	case c.kind == clueUndefined && at.lost[c.name]:
		return fmt.Sprintf("%s lost between calls again; nothing says what survives a call", c.name)
	}
	return c.summary + " again"
}

// ranOK goes on to the next step after code ran, or judges the answer
// after the final step.
func (at *attempt) ranOK(code string, c clue) (ended string, solved bool) {
	for _, name := range assigned(code) {
		at.madeBy[name] = at.step
	}
	if at.step < len(at.steps)-1 {
		at.step++
		return "", false
	}
	answer := lastLine(c.output)
	if !at.tk.verify(code, answer) {
		return fmt.Sprintf("wrong answer %q", answer), false
	}
	return "answer verified", true
}

// undefined reacts to a name not defined: a value an earlier step made
// that did not survive (keep it in a file, or redo that step), or else a
// typo. It returns how the task ended, or "".
func (at *attempt) undefined(code string, c clue) string {
	if k, ok := at.madeBy[c.name]; ok && k < at.step {
		if at.filesSurvive {
			at.steps[k] += saveCode(c.name)
			at.steps[at.step] = loadCode(c.name) + at.steps[at.step]
		} else {
			at.lost[c.name] = true
		}
		at.step = k
		return ""
	}
	fixed, ok := fixTypo(code, c.name, c.suggestion)
	if !ok {
		return "no fix known for " + c.summary
	}
	at.steps[at.step] = fixed
	return ""
}

// clueKind is what the agent makes of a reply.
type clueKind int

const (
	clueOK        clueKind = iota // output, no sign of an error
	clueEmpty                     // nothing at all
	clueUndefined                 // NameError: name '…' is not defined
	clueTooSlow                   // a time or CPU limit
	clueMemory                    // out of memory
	clueOther                     // another error the agent has no rule for
)

// clue is one reply as the agent reads it.
type clue struct {
	kind       clueKind
	name       string // the undefined name
	suggestion string // the name Python suggests instead ("Did you mean")
	output     string // the program's standard output, for clueOK
	summary    string // a few words for the report
}

// key identifies a clue, so that the agent notices it coming back.
func (c clue) key() string { return fmt.Sprintf("%d/%s", c.kind, c.name) }

var nameError = regexp.MustCompile(`NameError: name '(\w+)' is not defined(?:\. Did you mean: '(\w+)'\?)?`)

// readReply reads a reply's text the way the scripted model does: by
// looking for words, in the order of the rules.
func readReply(text string) clue {
	lower := strings.ToLower(text)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(lower, w) {
				return true
			}
		}
		return false
	}
	switch m := nameError.FindStringSubmatch(text); {
	case strings.TrimSpace(text) == "":
		return clue{kind: clueEmpty, summary: "an empty reply"}
	case m != nil:
		return clue{kind: clueUndefined, name: m[1], suggestion: m[2], summary: fmt.Sprintf("name '%s' is not defined", m[1])}
	case has("time limit", "timed out", "cpu limit", "took too long"):
		return clue{kind: clueTooSlow, summary: "a time limit"}
	case has("out of memory", "memoryerror"):
		return clue{kind: clueMemory, summary: "out of memory"}
	case has("too many processes"):
		return clue{kind: clueOther, summary: "too many processes"}
	case has("not run"):
		return clue{kind: clueOther, summary: "a refused run"}
	case strings.HasPrefix(text, "Error") || has("traceback (most recent call last)"):
		return clue{kind: clueOther, summary: "an error"}
	}
	return clue{kind: clueOK, output: outputOf(text)}
}

// outputOf returns the program's standard output from a reply: the
// quoted lines of the careful tool's stdout section, or, in a reply
// without sections (the naive tool's), the whole text.
func outputOf(text string) string {
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

// lastLine is the agent's answer: the last non-empty line printed.
func lastLine(output string) string {
	lines := strings.Split(strings.TrimSpace(output), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// filesSurvive reports whether a description tells the agent that
// files outlive a call: the only way it knows to keep a value.
func filesSurvive(description string) bool {
	return filesSurviveWords.MatchString(strings.ToLower(description))
}

var filesSurviveWords = regexp.MustCompile(`files? (survive|persist|are kept)`)

var assignment = regexp.MustCompile(`(?m)^([A-Za-z_]\w*)\s*=[^=]`)

// assigned returns the names a program assigns at its top level.
func assigned(code string) []string {
	var names []string
	for _, m := range assignment.FindAllStringSubmatch(code, -1) {
		names = append(names, m[1])
	}
	return names
}

// saveCode is the line the agent adds to keep name for a later call.
func saveCode(name string) string {
	return fmt.Sprintf("with open(%q, \"w\") as f:\n    f.write(repr(%s))\n", name+".txt", name)
}

// loadCode is the line the agent puts first to read name back.
func loadCode(name string) string {
	return fmt.Sprintf("import ast\nwith open(%q) as f:\n    %s = ast.literal_eval(f.read())\n", name+".txt", name)
}

// fixTypo replaces the undefined name with the one Python suggests,
// if the program assigns it, or else with the assigned name at the
// smallest edit distance (at most 2).
func fixTypo(code, name, suggestion string) (string, bool) {
	best, bestDist := "", 3
	for _, a := range assigned(code) {
		if a == suggestion {
			best = a
			break
		}
		if d := editDistance(a, name); d < bestDist {
			best, bestDist = a, d
		}
	}
	if best == "" {
		return "", false
	}
	word := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
	return word.ReplaceAllLiteralString(code, best), true
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
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
