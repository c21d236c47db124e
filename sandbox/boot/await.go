package boot

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// GoRecord is what a waiting init still needs: the program's argv and
// environment, and its deadline, counted from the run's start.
type GoRecord struct {
	Args   []string
	Env    []string
	Reaper *ReaperInit // nil unless the init is the program's reaper
}

// errDismissed ends a pre-started init whose go record never came: its
// caller closed the pipe instead (the session closed, or the next run was
// of another program). Nothing ran, so there is nothing to report.
var errDismissed = errors.New("dismissed before the run")

// awaitGo reads the go record from fd (in the init), to the end of the
// pipe: the caller writes it whole and closes its end.
func awaitGo(fd int) (*GoRecord, error) {
	var b []byte
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, failedAt(StepStart, fmt.Errorf("reading the go record: %w", err))
		}
		if n == 0 {
			break
		}
		b = append(b, buf[:n]...)
	}
	unix.Close(fd)
	if len(b) == 0 {
		return nil, errDismissed
	}
	var rec GoRecord
	if err := DecodeConfig(string(b), &rec); err != nil {
		return nil, failedAt(StepStart, fmt.Errorf("decoding the go record: %w", err))
	}
	if len(rec.Args) == 0 {
		return nil, failedAt(StepStart, errors.New("the go record names no program"))
	}
	return &rec, nil
}
