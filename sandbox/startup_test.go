package sandbox

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/sandbox/reexec"
)

// TestInitEnvNotPassedOn: the init starts with a GOMAXPROCS of its own
// ahead of the program's environment, and the program gets exactly the
// environment it was given, in order, its own GOMAXPROCS included.
func TestInitEnvNotPassedOn(t *testing.T) {
	root := testRoot(t)
	for _, env := range [][]string{
		{"A=1", "B=2"},
		{"A=1", "GOMAXPROCS=7", "B=2"},
	} {
		for _, n := range []int{1, 3} {
			p := MustPreset(n)
			p.Workspace.ScrubEnv = false // the environment is the one under test
			s, err := NewSession(Options{Policy: p, Root: root})
			assert.NilError(t, err)
			res, err := s.Run(context.Background(), Command{Path: "/usr/bin/env", Env: env})
			assert.NilError(t, err)
			assert.Check(t, is.Equal(res.Stdout, strings.Join(env, "\n")+"\n"), "L%d", n)
			assert.Check(t, s.Close())
		}
	}
}

// TestProgramStartsInItsGroup: the init joins the run's control group
// late, but before the exec: the program's first look at its groups
// finds it in the run's own, in every controller that enforces a limit.
func TestProgramStartsInItsGroup(t *testing.T) {
	hardenedHere(t)
	root := testRoot(t)
	own := "/sandboxlab-run-" + strconv.Itoa(os.Getpid()) + "-"
	for i := range 6 {
		// Without a cgroup namespace the program names its group as the
		// host does; with one (L6's default) it is the namespace's root,
		// "/", and the init, which stays outside, is "/..": the root is
		// the group, not where the init started.
		namespace := i%2 == 1
		p := MustPreset(6)
		p.Hardened.OwnIdentity = namespace
		s, err := NewSession(Options{Policy: p, Root: root})
		assert.NilError(t, err)
		res, err := s.Run(context.Background(), Command{Path: "/bin/sh", Args: []string{"-c", "cat /proc/self/cgroup; echo; cat /proc/1/cgroup"}})
		assert.NilError(t, err)
		assert.Check(t, s.Close())
		self, init, _ := strings.Cut(res.Stdout, "\n\n")
		for _, ctl := range []string{"memory", "pids"} {
			line, initLine := cgroupLine(self, ctl), cgroupLine(init, ctl)
			if !namespace {
				assert.Check(t, strings.Contains(line, own), "%s: %q in\n%s", ctl, line, res.Stdout)
				continue
			}
			assert.Check(t, strings.HasSuffix(line, ":/"), "%s in a cgroup namespace: %q in\n%s", ctl, line, res.Stdout)
			if strings.Count(line, ":") == 2 && !strings.HasPrefix(line, "0::") { // v1: the init stays out of the group
				assert.Check(t, strings.HasSuffix(initLine, ":/.."), "%s of the init: %q in\n%s", ctl, initLine, res.Stdout)
			}
		}
	}
}

// cgroupLine is the line of /proc/PID/cgroup text for the controller
// ctl: v1's line of that controller, or v2's unified one.
func cgroupLine(text, ctl string) string {
	line := ""
	for _, l := range strings.Split(text, "\n") {
		if f := strings.SplitN(l, ":", 3); len(f) == 3 && (f[1] == ctl || f[1] == "") {
			line = l
			if f[1] == ctl {
				break
			}
		}
	}
	return line
}

// TestInitRefusesOutsideItsGroup runs the init by hand (no namespaces,
// nothing to mount) with a "tasks file" it cannot write, as when the
// group has gone: it refuses, saying why, and runs nothing.
// (TestProgramStartsInItsGroup has it join a real group.)
func TestInitRefusesOutsideItsGroup(t *testing.T) {
	cfg, err := encodeConfig(initConfig{CgroupTasks: 1})
	assert.NilError(t, err)
	marker := filepath.Join(t.TempDir(), "ran")
	errR, errW, err := os.Pipe()
	assert.NilError(t, err)
	defer errR.Close()
	tasks, err := os.Open(os.DevNull) // read-only: the write fails
	assert.NilError(t, err)
	defer tasks.Close()
	cmd := reexec.Command(initArg0, cfg, "/usr/bin/touch", marker)
	cmd.ExtraFiles = []*os.File{errW, tasks} // initErrFD, cgroupTasksFD
	assert.NilError(t, cmd.Start())
	errW.Close()
	report, err := readInitReport(errR)
	assert.NilError(t, err)
	rec, err := decodeInitRecord(report)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(rec, initRecord{Kind: InitSetupFailed, Step: StepCgroup, Errno: syscall.EBADF, Message: "joining the run's control group"}))
	assert.Check(t, is.Error(initOutcomeErr(report, nil, "/usr/bin/touch"), "sandbox unavailable: joining the run's control group: bad file descriptor"))
	err = cmd.Wait()
	_, statErr := os.Stat(marker)
	assert.Check(t, errors.Is(statErr, fs.ErrNotExist), "the program must not run: %v", statErr)
	var exit *exec.ExitError
	assert.Check(t, errors.As(err, &exit) && exit.ExitCode() == 125, "%v", err)
}

// TestInitSetupMeasured: a run whose init execs the program reports how
// long the init took to get there; one without an init reports nothing,
// and so does L6, whose init stays and keeps the pipe whose close marks
// the exec.
func TestInitSetupMeasured(t *testing.T) {
	root := testRoot(t)
	for _, n := range []int{0, 1, 5, 6} {
		if n == 6 && cgroupProbe(MustPreset(6).Hardened.Cgroup) != nil {
			continue
		}
		s, err := NewSession(Options{Policy: MustPreset(n), Root: root})
		assert.NilError(t, err)
		res, err := s.Run(context.Background(), Command{Path: "/bin/true"})
		assert.NilError(t, err)
		assert.Check(t, s.Close())
		if n == 0 || n == 6 {
			assert.Check(t, is.Equal(res.InitSetup, time.Duration(0)), "L%d", n)
			continue
		}
		assert.Check(t, res.InitSetup > 0 && res.InitSetup < res.Wall, "L%d: %v of %v", n, res.InitSetup, res.Wall)
	}
}
