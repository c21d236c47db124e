package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"sandboxlab/report/verdict"
	"sandboxlab/sandbox"
)

func init() {
	register(command{name: "run", summary: "run one command in the sandbox", run: runCmd})
}

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", "[--level N] [--json] [--session DIR] -- CMD [ARGS]",
		"Runs CMD under the level's policy and reports how it ended. Without --json it prints the\n"+
			"program's output and a status line, and exits with the program's status (128+signal when\n"+
			"it was killed, 125 when the sandbox refused or failed to run it, 127 when CMD is not found).\n"+
			"With --json it prints the Result as one JSON object and exits 0 whenever the run took place.", stderr)
	level := fs.Int("level", 5, "isolation level `N`, 0 (bare) to 5 (filesystem and capabilities)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	sessionDir := fs.String("session", "", "run in the session directory `DIR` made by 'sandboxlab session new' (kept afterwards)")
	defect := defectFlag(fs)
	if stop, err := parseFlags(fs, args); stop {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("no command given (sandboxlab run --help)")
	}
	if err := enableDefect(*defect); err != nil {
		return err
	}
	policy, err := sandbox.Preset(*level)
	if err != nil {
		return usagef("--level: %v", err)
	}
	path, err := exec.LookPath(fs.Arg(0))
	if err != nil {
		return failWith(verdict.ExitRunNotFound, err)
	}
	s, err := openSession(policy, *sessionDir)
	if err != nil {
		return failWith(verdict.ExitRunRefused, err)
	}
	res, err := s.Run(ctx, sandbox.Command{Path: path, Args: fs.Args()[1:]})
	if *sessionDir == "" {
		if cerr := s.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}
	if err != nil && res == nil {
		return failWith(startFailure(err), err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(res)
		if err != nil {
			fmt.Fprintf(stderr, "sandboxlab run: %v\n", err)
		}
		if res.Reason == sandbox.ReasonRefused {
			return exit(verdict.ExitRunRefused)
		}
		return nil
	}
	io.WriteString(stdout, res.Stdout)
	io.WriteString(stderr, res.Stderr)
	fmt.Fprintln(stderr, statusLine(res))
	return exit(exitStatus(res))
}

// statusLine sums a result up in one line for people.
func statusLine(r *sandbox.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "sandboxlab: L%d %s", r.Level, r.Reason)
	switch {
	case r.Reason == sandbox.ReasonRefused:
		fmt.Fprintf(&b, ": %s", r.Message)
	case r.Signal != "":
		fmt.Fprintf(&b, " (%s)", r.Signal)
	default:
		fmt.Fprintf(&b, " (status %d)", r.ExitCode)
	}
	if r.TimedOut {
		b.WriteString(", timed out")
	}
	if r.OOM {
		b.WriteString(", out of memory")
	}
	fmt.Fprintf(&b, ", wall %d ms, cpu %d ms", r.Wall.Milliseconds(), r.CPU.Milliseconds())
	for _, s := range []struct {
		name  string
		cut   bool
		bytes int64
	}{{"stdout", r.StdoutTruncated, r.StdoutBytes}, {"stderr", r.StderrTruncated, r.StderrBytes}} {
		if s.cut {
			fmt.Fprintf(&b, ", %s cut (%d bytes written)", s.name, s.bytes)
		}
	}
	return b.String()
}

// exitStatus maps a result to the exit status of 'run', as timeout(1) and
// container tools do.
func exitStatus(r *sandbox.Result) int {
	switch {
	case r.Reason == sandbox.ReasonRefused:
		return verdict.ExitRunRefused
	case r.Signal != "":
		return 128 + int(unix.SignalNum(r.Signal))
	}
	return r.ExitCode
}

// startFailure is the exit status for a run that did not start, as
// shells and timeout(1) have it: 127 for a program that is not there, 126
// for one that cannot be executed, 125 when the sandbox itself failed.
func startFailure(err error) int {
	switch {
	case errors.Is(err, sandbox.ErrUnavailable):
		return verdict.ExitRunRefused
	case errors.Is(err, fs.ErrNotExist):
		return verdict.ExitRunNotFound
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOEXEC):
		return verdict.ExitRunNoExec
	}
	return verdict.ExitRunRefused
}
