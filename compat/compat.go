// Package compat is the compatibility suite: ordinary work an agent's
// program does (Python's standard library, shell pipelines, a C
// toolchain, HTTP and HTTPS through the egress proxy), run through the
// sandbox at the levels asked for, to show whether a level breaks it.
// 'sandboxlab compat' runs it on a user's own machine; its test runs it
// at L5 and L6.
//
// Each workload checks its own results and prints "ok" last; a workload
// passes when the run ended by itself with status 0 and that line, and
// for the network ones when the loopback server the suite started saw
// the request. The levels' limits hold, but for the wall clock, raised
// to WallClock: what the suite asks is whether the isolation breaks the
// work, not whether a loaded machine finishes it in 1.5 s.
package compat

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"sandboxlab/sandbox"
)

// Workload is one ordinary piece of work.
type Workload struct {
	// Name is the workload's stable id.
	Name string `json:"name"`
	// What says in one line what it does.
	What string `json:"what"`
	// Needs is a program that must be installed (a compiler, a shell):
	// where it is missing the workload is skipped, saying so.
	Needs string `json:"needs,omitempty"`
	// Python is the program's source, run as python3 -c; Shell a script,
	// run as sh -c after set -e. One of the two.
	Python string `json:"-"`
	Shell  string `json:"-"`
	// network: it reaches the suite's loopback servers through the
	// egress proxy, with their URLs and CA certificate as arguments.
	network bool
}

// WallClock is the wall clock of every run of the suite.
const WallClock = 10 * time.Second

// DefaultLevels are the levels the suite runs at unless asked otherwise.
var DefaultLevels = []int{5, 6}

// python is the interpreter every Python workload runs.
const python = "/usr/bin/python3"

// Workloads lists every workload, in report order.
func Workloads() []Workload {
	return slices.Concat(pythonWorkloads, networkWorkloads, shellWorkloads, cWorkloads)
}

// Options choose what Run runs.
type Options struct {
	// Levels are the levels to run at (DefaultLevels when empty).
	Levels []int
	// Only lists workload names (all when empty).
	Only []string
	// Progress, if set, is called after each run.
	Progress func(Result)
}

// ErrUsage wraps every error about a bad selection.
var ErrUsage = errors.New("compat")

// selection returns the workloads and levels opts ask for.
func (opts Options) selection() ([]Workload, []int, error) {
	levels := opts.Levels
	if len(levels) == 0 {
		levels = DefaultLevels
	}
	for _, l := range levels {
		if l < 0 || l >= sandbox.Levels {
			return nil, nil, fmt.Errorf("%w: level %d: want 0 to %d", ErrUsage, l, sandbox.Levels-1)
		}
	}
	all := Workloads()
	if len(opts.Only) == 0 {
		return all, levels, nil
	}
	var out []Workload
	for _, name := range opts.Only {
		i := slices.IndexFunc(all, func(w Workload) bool { return w.Name == name })
		if i < 0 {
			return nil, nil, fmt.Errorf("%w: unknown workload %q (known: %s)", ErrUsage, name, strings.Join(Names(), ", "))
		}
		out = append(out, all[i])
	}
	return out, levels, nil
}

// Validate reports a level or a workload name that does not exist.
func (opts Options) Validate() error {
	_, _, err := opts.selection()
	return err
}

// Runs is how many runs opts ask for (0 when they are not valid).
func (opts Options) Runs() int {
	list, levels, _ := opts.selection()
	return len(list) * len(levels)
}

// Names returns every workload's name, in report order.
func Names() []string {
	var out []string
	for _, w := range Workloads() {
		out = append(out, w.Name)
	}
	return out
}

// Run runs the workloads at each level, two runs at a time per core,
// and returns the report.
func Run(ctx context.Context, opts Options) (*Report, error) {
	list, levels, err := opts.selection()
	if err != nil {
		return nil, err
	}
	srv, err := startServers()
	if err != nil {
		return nil, err
	}
	defer srv.close()
	rep := &Report{Levels: levels, Workloads: list, Results: make([]Result, len(list)*len(levels))}
	var mu sync.Mutex
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range 2 * runtime.NumCPU() {
		wg.Go(func() {
			for i := range jobs {
				r := runOne(ctx, list[i%len(list)], levels[i/len(list)], srv)
				mu.Lock()
				rep.Results[i] = r
				if opts.Progress != nil {
					opts.Progress(r)
				}
				mu.Unlock()
			}
		})
	}
	for i := range rep.Results {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep.tally()
	return rep, nil
}

// runOne runs w at level and judges it.
func runOne(ctx context.Context, w Workload, level int, srv *servers) Result {
	r := Result{Workload: w.Name, Level: level}
	if w.Needs != "" {
		if _, err := os.Stat(w.Needs); err != nil {
			r.Skipped = "needs " + w.Needs + ", which is not installed"
			return r
		}
	}
	p := sandbox.MustPreset(level)
	p.Limits.Wall, p.Watchdog = WallClock, WallClock
	cmd := sandbox.Command{Path: python, Args: []string{"-c", w.Python}}
	if w.Shell != "" {
		// sh -c takes $0 after the script: the workload's name.
		cmd = sandbox.Command{Path: "/bin/sh", Args: []string{"-c", "set -e\n" + w.Shell + "\necho ok", w.Name}}
	}
	var path string
	if w.network {
		if !p.Network.Isolate {
			r.Skipped = "the egress proxy needs a network namespace (L4 and up)"
			return r
		}
		p.Network.Allow, p.Network.Resolve = srv.allow(), srv.resolve()
		path = "/" + w.Name + "-" + randomHex(6)
		cmd.Args = append(cmd.Args, srv.httpURL(path), srv.httpsURL(path), srv.token(path), srv.caPEM)
	}
	began := time.Now()
	res, err := sandbox.Run(ctx, p, cmd)
	r.MS = time.Since(began).Milliseconds()
	r.judge(res, err)
	if r.Passed && w.network && srv.hits(path) == 0 {
		r.Passed, r.Detail = false, "the loopback server saw no request for "+path
	}
	return r
}

// judge decides r from the run: it passed when it ended by itself with
// status 0 and "ok" as its last line.
func (r *Result) judge(res *sandbox.Result, err error) {
	switch {
	case err != nil:
		r.Reason, r.Detail = "error", err.Error()
		return
	case res == nil:
		r.Reason, r.Detail = "error", "no result"
		return
	}
	r.Reason, r.ExitCode = string(res.Reason), res.ExitCode
	lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	r.Passed = res.Reason == sandbox.ReasonExited && res.ExitCode == 0 && lines[len(lines)-1] == "ok"
	if !r.Passed {
		r.Detail = fmt.Sprintf("%s, exit status %d: %s", res.Reason, res.ExitCode, lastLine(res.Stderr+"\n"+res.Message))
	}
}

// lastLine is the last non-empty line of s, cut to 200 bytes.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}
