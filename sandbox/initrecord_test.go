package sandbox

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"testing/iotest"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/sandbox/boot"
	"sandboxlab/sandbox/reexec"
)

// runInitByHand runs the init with cfg outside any namespace, as the
// sandbox does at L1, and returns what it reported and how it ended.
func runInitByHand(t *testing.T, cfg initConfig, argv ...string) ([]byte, error) {
	t.Helper()
	config, err := encodeConfig(cfg)
	assert.NilError(t, err)
	errR, errW, err := os.Pipe()
	assert.NilError(t, err)
	defer errR.Close()
	cmd := reexec.Command(initArg0, append([]string{config}, argv...)...)
	cmd.ExtraFiles = []*os.File{errW} // initErrFD
	assert.NilError(t, cmd.Start())
	errW.Close()
	report, err := readInitReport(errR)
	assert.NilError(t, err)
	return report, cmd.Wait()
}

// TestInitFailureIsTyped: each way the init can fail reaches the caller
// of Run as an *InitError of its kind, with its step and errno, and
// keeps the meaning it always had: a failed set-up is ErrUnavailable, a
// failed exec is os/exec's (a missing program is fs.ErrNotExist, which
// the CLI turns into 127).
func TestInitFailureIsTyped(t *testing.T) {
	root := testRoot(t)
	run := func(p Policy, path string) error {
		t.Helper()
		s, err := NewSession(Options{Policy: p, Root: root})
		assert.NilError(t, err)
		defer func() { assert.Check(t, s.Close()) }()
		res, err := s.Run(context.Background(), Command{Path: path})
		assert.Check(t, res == nil, "a run that did not start has no result")
		return err
	}
	t.Run("missing program", func(t *testing.T) {
		levels := []int{1, 3, 5}
		if cgroupProbe(MustPreset(6).Hardened.Cgroup) == nil {
			levels = append(levels, 6) // reported by the reaper's child
		}
		for _, level := range levels {
			err := run(MustPreset(level), "/nonexistent/program")
			var ie *InitError
			assert.Assert(t, errors.As(err, &ie), "L%d: %v", level, err)
			assert.Check(t, is.DeepEqual(*ie, InitError{Kind: InitExecFailed, Step: StepExec, Errno: syscall.ENOENT, Path: "/nonexistent/program"}))
			assert.Check(t, errors.Is(err, fs.ErrNotExist))
			assert.Check(t, !errors.Is(err, ErrUnavailable), "a missing program is not a missing sandbox")
			var pe *fs.PathError
			assert.Check(t, errors.As(err, &pe) && pe.Op == "exec")
			assert.Check(t, is.Error(err, "exec /nonexistent/program: no such file or directory"))
		}
	})
	t.Run("resource limit", func(t *testing.T) {
		// Past fs.nr_open: no one may set it, root included. The init
		// reports it from its allocation-free path.
		p := MustPreset(1)
		p.Limits.OpenFiles = 1 << 30
		err := run(p, "/bin/true")
		var ie *InitError
		assert.Assert(t, errors.As(err, &ie), "%v", err)
		assert.Check(t, is.DeepEqual(*ie, InitError{Kind: InitSetupFailed, Step: StepRlimits, Errno: syscall.EPERM, Message: "setting RLIMIT_NOFILE", Path: "/bin/true"}))
		assert.Check(t, errors.Is(err, ErrUnavailable))
		assert.Check(t, errors.Is(err, syscall.EPERM))
		assert.Check(t, is.Error(err, "sandbox unavailable: setting RLIMIT_NOFILE: operation not permitted"))
	})
	t.Run("landlock", func(t *testing.T) {
		// A failure without an errno: the kernel's ABI is short of the
		// policy's.
		p := MustPreset(5)
		p.Hardened = Hardened{NoNewPrivs: true, Landlock: true, LandlockABI: 99}
		err := run(p, "/bin/true")
		var ie *InitError
		assert.Assert(t, errors.As(err, &ie), "%v", err)
		assert.Check(t, is.Equal(ie.Kind, InitSetupFailed))
		assert.Check(t, is.Equal(ie.Step, StepLandlock))
		assert.Check(t, is.Equal(ie.Errno, syscall.Errno(0)))
		assert.Check(t, is.Contains(ie.Message, "the policy needs 99"))
		assert.Check(t, errors.Is(err, ErrUnavailable))
	})
}

// TestInitReportsFromTheRawPath: the records execWithLimits writes with
// bare system calls decode as the Go path's do, the exec's included.
func TestInitReportsFromTheRawPath(t *testing.T) {
	report, err := runInitByHand(t, initConfig{Rlimits: []rlimit{{Resource: syscall.RLIMIT_NOFILE, Cur: 1 << 30, Max: 1 << 30}}}, "/bin/true")
	var exit *exec.ExitError
	assert.Check(t, errors.As(err, &exit) && exit.ExitCode() == 125, "%v", err)
	rec, err := decodeInitRecord(report)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(rec, initRecord{Kind: InitSetupFailed, Step: StepRlimits, Errno: syscall.EPERM, Message: "setting RLIMIT_NOFILE"}))

	dir := t.TempDir()
	report, _ = runInitByHand(t, initConfig{Rlimits: []rlimit{{Resource: syscall.RLIMIT_NOFILE, Cur: 64, Max: 64}}}, dir) // a directory
	rec, err = decodeInitRecord(report)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(rec, initRecord{Kind: InitExecFailed, Step: StepExec, Errno: syscall.EACCES}))
	assert.Check(t, errors.Is(initOutcomeErr(report, nil, dir), fs.ErrPermission))
}

// TestInitReportGarbled: a report that is not one whole record, or that
// cannot be read, is an error (ErrUnavailable), never a started program.
func TestInitReportGarbled(t *testing.T) {
	good := initRecord{Kind: InitSetupFailed, Step: StepHide, Errno: syscall.EPERM, Message: "mounting tmpfs on /home"}.Encode()
	edit := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	cases := map[string][]byte{
		"one byte":           good[:1],
		"half a header":      good[:recordHeader/2],
		"header only":        good[:recordHeader],
		"message cut":        good[:len(good)-1],
		"trailing bytes":     append(append([]byte(nil), good...), 'x'),
		"two records":        append(append([]byte(nil), good...), good...),
		"text":               []byte("setup: mounting tmpfs on /home: errno 1"),
		"bad magic":          edit(func(b []byte) []byte { b[0] = 'x'; return b }),
		"bad version":        edit(func(b []byte) []byte { b[4] = boot.RecordVersion + 1; return b }),
		"unknown kind":       edit(func(b []byte) []byte { b[5] = 9; return b }),
		"no step":            edit(func(b []byte) []byte { b[6] = 0; return b }),
		"unknown step":       edit(func(b []byte) []byte { b[6] = byte(StepExec + 1); return b }),
		"exec at a set-up":   edit(func(b []byte) []byte { b[5] = byte(InitExecFailed); return b }),
		"exec without errno": initRecord{Kind: InitExecFailed, Step: StepExec}.Encode(),
		"not UTF-8":          edit(func(b []byte) []byte { b[len(b)-1] = 0xff; return b }),
	}
	for name, report := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := decodeInitRecord(report)
			assert.Check(t, is.ErrorIs(err, errInitReport))
			err = initOutcomeErr(report, nil, "/bin/true")
			assert.Check(t, is.ErrorIs(err, ErrUnavailable))
			var ie *InitError
			assert.Check(t, !errors.As(err, &ie), "a garbled report is no init error: %v", err)
		})
	}
	t.Run("read fails", func(t *testing.T) {
		_, err := readInitReport(iotest.ErrReader(syscall.EIO))
		assert.Check(t, is.ErrorIs(err, errInitReport))
		assert.Check(t, is.ErrorIs(initOutcomeErr(nil, err, "/bin/true"), ErrUnavailable))
	})
	t.Run("read fails after a record", func(t *testing.T) {
		_, err := readInitReport(io.MultiReader(bytes.NewReader(good), iotest.ErrReader(syscall.EIO)))
		assert.Check(t, is.ErrorIs(err, errInitReport))
	})
	assert.NilError(t, initOutcomeErr(nil, nil, "/bin/true"), "an empty report is a started program")
}

// initOutcomeErr is initOutcome's error, for reports that hold none of
// the reaper's records.
func initOutcomeErr(report []byte, readErr error, path string) error {
	_, err := initOutcome(report, readErr, path)
	return err
}
