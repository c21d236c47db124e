package cli

import (
	"errors"
	"fmt"
	"io"

	"sandboxlab/verdict"
)

// ExitError is an error that carries the exit code it calls for. With a
// nil err it is a silent exit: what there was to say is said.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Exit returns a silent exit with code (nil for 0).
func Exit(code int) error {
	if code == verdict.ExitOK {
		return nil
	}
	return &ExitError{Code: code}
}

// FailWith returns err with the exit code it calls for.
func FailWith(code int, err error) error { return &ExitError{Code: code, Err: err} }

// FirstError returns the first of errs that is not nil: Validate's checks
// in the order they are reported.
func FirstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// exitWith prints err, if it says anything, and returns its exit code.
func exitWith(err error, prefix string, stderr io.Writer) int {
	if err == nil {
		return verdict.ExitOK
	}
	code := verdict.ExitInternal
	var e *ExitError
	if errors.As(err, &e) {
		code = e.Code
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintf(stderr, "%s: %s\n", prefix, msg)
	}
	return code
}
