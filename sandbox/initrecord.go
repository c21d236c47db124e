package sandbox

import (
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"syscall"
)

// The init's report on its error pipe (its record's layout and kinds are
// boot's): read here, and given to the caller as an *InitError.

// InitError is why the init did not start the program, as it reported.
type InitError struct {
	Kind InitErrorKind
	Step InitStep
	// Errno is the system call's error, 0 when the failure had none.
	Errno syscall.Errno
	// Message says what the init was doing ("mounting proc on /proc"),
	// and why it failed where there is no Errno.
	Message string
	// Path is the program's.
	Path string
}

func (e *InitError) Error() string {
	if e.Kind == InitExecFailed {
		return e.pathError().Error()
	}
	msg := e.Message
	if msg == "" {
		msg = e.Step.String()
	}
	if e.Errno != 0 && !strings.HasSuffix(msg, e.Errno.Error()) {
		msg += ": " + e.Errno.Error()
	}
	return ErrUnavailable.Error() + ": " + msg
}

// Unwrap gives a set-up failure as ErrUnavailable and its errno, an exec
// failure as the *fs.PathError os/exec would return.
func (e *InitError) Unwrap() []error {
	if e.Kind == InitExecFailed {
		return []error{e.pathError()}
	}
	if e.Errno != 0 {
		return []error{ErrUnavailable, e.Errno}
	}
	return []error{ErrUnavailable}
}

func (e *InitError) pathError() *fs.PathError {
	return &fs.PathError{Op: "exec", Path: e.Path, Err: e.Errno}
}

// readInitReport reads what the init wrote until EOF, a byte past the
// largest record at most.
func readInitReport(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, recordMax+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errInitReport, err)
	}
	return b, nil
}

// readInitRecord reads one record's header and the length of message it
// declares, and no more; eof is true when r ended first.
func readInitRecord(r io.Reader) (b []byte, eof bool, err error) {
	b = make([]byte, recordHeader)
	n, err := io.ReadFull(r, b)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return b[:n], true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", errInitReport, err)
	}
	b = append(b, make([]byte, binary.LittleEndian.Uint16(b[12:]))...)
	n, err = io.ReadFull(r, b[recordHeader:])
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return b[:recordHeader+n], true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", errInitReport, err)
	}
	return b, false, nil
}

// initOutcome is what the init's report says about the program at path:
// nil, nil when the init exec'd it and wrote nothing (or, as the reaper,
// died before it could write); the reaper's record of the program's end;
// the *InitError it reported; or an error wrapping ErrUnavailable when
// the report could not be read or is not one whole record.
func initOutcome(report []byte, readErr error, path string) (*initEnd, error) {
	if readErr != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, readErr)
	}
	if len(report) == 0 {
		return nil, nil
	}
	r, err := decodeInitRecord(report)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if r.End != nil {
		return r.End, nil
	}
	return nil, &InitError{Kind: r.Kind, Step: r.Step, Errno: r.Errno, Message: r.Message, Path: path}
}
