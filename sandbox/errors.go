package sandbox

import "errors"

var (
	// ErrUnavailable means the isolation the policy asks for cannot be had
	// on this machine (a namespace could not be created, or the init could
	// not set it up: see InitError), or that the init's report of its
	// set-up could not be read. Nothing was run, or its run is not
	// reported: the sandbox fails closed.
	ErrUnavailable = errors.New("sandbox unavailable")
	// ErrClosed is returned for a session that was closed.
	ErrClosed = errors.New("session closed")
)
