// Package checks holds the sandbox's promise checks: each tied to one
// promise, each run under the lowest level that holds its layer with the
// layers that would hide a defect taken away. The experiments and the
// scripted agent live in checks/experiments and checks/agent.
//
// A check is written once and runs two ways: as a subtest under 'go test
// ./checks', and from the binary ('sandboxlab check', and the mutation
// runner with a defect switched on). Its body receives a *T, whose
// assertions (Check, Assert, NilError) work the same whichever way it
// runs.
//
// Every verdict comes from what the host observes — processes in /proc,
// files on disk, bytes at a loopback listener, the harness's own memory,
// the Result the sandbox hands back — never from a program's word.
//
// A check is found by its id in one hop: <id>.go holds it, registry.go
// lists them in order, the course's first, then the hardening suite's.
// The package imports the sandbox, sandbox/evidence (what the host can
// see of a program) and report (with its vocabulary, verdict);
// never the attacks, and never the harness, which runs the checks through
// a worker.
package checks

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"sandboxlab/mutants"
	"sandboxlab/report"
	"sandboxlab/sandbox"
	"sandboxlab/sandbox/cleanup"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/verdict"
)

// Check is one promise check.
type Check struct {
	// ID is the stable id used in predictions.yaml and every report.
	ID string
	// Promise is the promise the check tests.
	Promise string
	// Level is the preset the check's policy is derived from: the lowest
	// level that holds the layer under test.
	Level int
	// Suite is the suite the check belongs to; a defect is judged by the
	// checks of its own suite. The registry's list gives the course's
	// theirs; a hardening check names it (Suite: verdict.Hardening).
	Suite verdict.Suite
	// Untimed says the check's promise is not about time: its programs run
	// on a clock long enough for what they do (notTimed, egressPolicy), so
	// a run stopped at that clock was kept from its work by the machine,
	// and a failure with one is no verdict on the sandbox. The mutation
	// harness runs such a failure once more, alone (see harness.runTask).
	Untimed bool
	// Touches, when set, names every layer of the policy (sandbox.Layers)
	// whose loss can change the check's verdict. Under a defect that weakens
	// one layer only (mutants.Defect.Layer), the mutation harness runs the
	// check only when it names that layer: it is for the costly checks
	// whose set-up passes every such defect's site. Nil: any layer may.
	Touches []string
	// Body runs the check. It fails through t (Check, Assert) and says what
	// it saw with t.Evidence.
	Body func(t *T)
}

// TestingT is the part of *testing.T a check needs; the binary supplies a
// recorder instead.
type TestingT interface {
	Log(args ...any)
	Fail()
	FailNow()
	Helper()
}

// T is what a check body gets.
type T struct {
	tb       TestingT
	ctx      context.Context
	mu       sync.Mutex
	failed   bool
	messages []string
	evidence string
	cleanups cleanup.Stack
	root     string
}

// Log records a message (an assertion logs its failure here).
func (t *T) Log(args ...any) {
	t.tb.Helper()
	t.mu.Lock()
	t.messages = append(t.messages, strings.TrimSpace(fmt.Sprintln(args...)))
	t.mu.Unlock()
	t.tb.Log(args...)
}

// Logf records a formatted message.
func (t *T) Logf(format string, args ...any) { t.Log(fmt.Sprintf(format, args...)) }

// Fail marks the check failed and goes on.
func (t *T) Fail() {
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
	t.tb.Fail()
}

// FailNow marks the check failed and stops its body.
func (t *T) FailNow() {
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
	t.tb.FailNow()
}

// Helper marks the caller as a helper.
func (t *T) Helper() { t.tb.Helper() }

// Evidence sets what the check reports having seen when it passes.
func (t *T) Evidence(format string, args ...any) { t.evidence = fmt.Sprintf(format, args...) }

// Context is cancelled when the run is interrupted.
func (t *T) Context() context.Context { return t.ctx }

// Cleanup registers f to run after the body, last registered first, also
// when the body fails.
func (t *T) Cleanup(f func()) { t.cleanups.Add(f) }

// Root is a fresh directory for the check's fixtures and sessions. It is
// mode 0711, so the program's host identity can reach what is made inside
// it for it, and it is removed after the check.
func (t *T) Root() string { return t.root }

// Run runs the check on tb and stores the verdict in out. When the body
// stops early (FailNow ends the calling goroutine), out is still filled in,
// from a deferred function: callers that are not 'go test' run Run on a
// goroutine of its own and read out once it has ended.
func (c *Check) Run(ctx context.Context, tb TestingT, out *report.Check) {
	t := &T{tb: tb, ctx: ctx}
	start := time.Now()
	defer func() {
		t.cleanups.Clean() // every step is a func(), so there is no error to keep
		*out = report.Check{ID: c.ID, Suite: c.Suite, Promise: c.Promise, Level: c.Level, Passed: !t.failed,
			Evidence: t.verdictText(), MS: time.Since(start).Milliseconds()}
	}()
	// Fixtures go where a user's files would be, not in a scratch
	// directory that L5 makes private (see evidence.FixtureRoot).
	base, err := evidence.FixtureRoot()
	var root string
	if err == nil {
		root, err = evidence.NewFixtureDir(base, "sandboxlab-check-")
	}
	if err == nil {
		t.Cleanup(func() { evidence.RemoveFixtureDir(root) })
	}
	if err != nil {
		t.Logf("making the fixture directory: %v", err)
		t.FailNow()
	}
	t.root = root
	c.Body(t)
}

// verdictText is the evidence on a pass, the first failure otherwise.
func (t *T) verdictText() string {
	if !t.failed {
		return t.evidence
	}
	for _, m := range t.messages {
		if m != "" {
			return oneLine(m)
		}
	}
	return "failed"
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 240 {
		s = s[:237] + "..."
	}
	return s
}

// recorder is the TestingT of the binary: it keeps the verdict and ends
// the body's goroutine on FailNow, as the testing package does.
type recorder struct{}

func (recorder) Log(...any) {}
func (recorder) Fail()      {}
func (recorder) FailNow()   { runtime.Goexit() }
func (recorder) Helper()    {}

// Options select which checks RunAll runs.
type Options struct {
	// Only lists check ids to run (all of the suites when empty).
	Only []string
	// Suites lists the suites whose checks run (all when empty).
	Suites []verdict.Suite
	// Progress, if set, is called after each check.
	Progress func(report.Check)
	// Without names a layer (sandbox.Layers) taken away from every
	// policy the checks make, and Plain undoes the layers the checks
	// take away on purpose: the masking search's variants of a check.
	Without string
	Plain   bool
	// TookAway, if set, is called with each layer a check takes away on
	// purpose (as the tree-kill check takes the CPU limit away).
	TookAway func(layer string)
	// Queue is how the checks' sessions use the host's run slots, and
	// Observe, if set, is given each of their Results (sandbox.Options).
	Queue   sandbox.Queue
	Observe func(*sandbox.Result)
}

// RunAll runs the checks in order, each on a goroutine of its own, and
// returns the report.
func RunAll(ctx context.Context, opts Options) (*report.Checks, error) {
	list, err := Select(opts.Only, opts.Suites)
	if err != nil {
		return nil, err
	}
	settings.without, settings.plain, settings.tookAway = nil, opts.Plain, opts.TookAway
	settings.queue, settings.observe = opts.Queue, opts.Observe
	if opts.Without != "" {
		l, err := sandbox.LookupLayer(opts.Without)
		if err != nil {
			return nil, err
		}
		settings.without = &l
	}
	defer func() {
		settings.without, settings.plain, settings.tookAway = nil, false, nil
		settings.queue, settings.observe = sandbox.Queue{}, nil
	}()
	id := sandbox.HostIdentity()
	rep := &report.Checks{
		Identity: report.Identity{UID: os.Geteuid(), Root: sandbox.HostRoot(), ProgramUID: id.UID},
		Defect:   string(mutants.Active()),
		Checks:   []report.Check{},
	}
	for _, c := range list {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var out report.Check
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.Run(ctx, recorder{}, &out)
		}()
		<-done
		rep.Checks = append(rep.Checks, out)
		if opts.Progress != nil {
			opts.Progress(out)
		}
	}
	rep.Tally()
	return rep, nil
}

// Select returns the checks of the given suites (all suites when none)
// with the given ids (all of them when ids is empty), in registry order,
// or an error naming an unknown id or a check of a suite not selected.
func Select(ids []string, suites []verdict.Suite) ([]*Check, error) {
	want := map[string]bool{}
	for _, id := range ids {
		c := Lookup(id)
		switch {
		case c == nil:
			return nil, fmt.Errorf("unknown check %q (known: %s)", id, strings.Join(IDs(), ", "))
		case !c.Suite.In(suites):
			return nil, fmt.Errorf("check %s is in the %s suite, which is not selected (suites: %s)", id, c.Suite, verdict.SuiteList(suites))
		}
		want[id] = true
	}
	out := []*Check{}
	for _, c := range All {
		if c.Suite.In(suites) && (len(want) == 0 || want[c.ID]) {
			out = append(out, c)
		}
	}
	return out, nil
}

// Lookup returns the check with the given id, or nil.
func Lookup(id string) *Check {
	for _, c := range All {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// IDs returns every check id in registry order.
func IDs() []string {
	ids := make([]string, len(All))
	for i, c := range All {
		ids[i] = c.ID
	}
	return ids
}

// withT runs body with a check's T outside any check, and returns the
// first failure it recorded ("" if none).
func withT(ctx context.Context, body func(t *T)) (string, error) {
	c := &Check{ID: "measurement", Body: body}
	var out report.Check
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx, recorder{}, &out)
	}()
	<-done
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if !out.Passed {
		return strings.TrimSpace(out.Evidence), nil
	}
	return "", nil
}
