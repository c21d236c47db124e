package sandbox

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipes are every file a run shares with its program: its stdout and
// stderr, and the init's error pipe when there is an init. The child's
// ends are closed once it has started (it holds its own copies), so that
// the parent's ends see EOF when the program and whatever it left behind
// are gone. Only these methods close them; a closed end is set to nil.
type pipes struct {
	outR, outW   *os.File
	errR, errW   *os.File
	initR, initW *os.File // nil when the program is started without an init
}

// newPipes creates the output pipes.
func newPipes() (*pipes, error) {
	ps := &pipes{}
	var err error
	if ps.outR, ps.outW, err = os.Pipe(); err != nil {
		return nil, err
	}
	if ps.errR, ps.errW, err = os.Pipe(); err != nil {
		ps.close()
		return nil, err
	}
	widen(ps.outW)
	widen(ps.errW)
	return ps, nil
}

// outputPipeSize is the output pipes' buffer: with the default 64 KiB, a
// program printing megabytes waits for the reader 16 times per MiB, and
// on a crowded machine each wait is a trip through the run queue (10 MB
// printed beside busy runs took over 1.5 s, most of it asleep). 1 MiB is
// the default /proc/sys/fs/pipe-max-size, which an ordinary user may ask.
const outputPipeSize = 1 << 20

// widen grows w's pipe buffer to outputPipeSize, as far as the kernel
// allows: past a user's pipe-user-pages-soft it refuses, and the pipe
// keeps its size, which only costs speed.
func widen(w *os.File) {
	if sc, err := w.SyscallConn(); err == nil {
		_ = sc.Control(func(fd uintptr) {
			_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, outputPipeSize)
		})
	}
}

// openInit creates the init's error pipe.
func (ps *pipes) openInit() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	ps.initR, ps.initW = r, w
	return nil
}

// closeInit closes the init's error pipe before it was used: the command
// that was to report on it did not start.
func (ps *pipes) closeInit() {
	closeFiles(&ps.initR, &ps.initW)
}

// closeChildEnds closes the write ends after the start.
func (ps *pipes) closeChildEnds() {
	closeFiles(&ps.outW, &ps.errW, &ps.initW)
}

// closeParentEnds closes the read ends. Closing an output pipe also ends a
// read still blocked on it.
func (ps *pipes) closeParentEnds() {
	closeFiles(&ps.outR, &ps.errR, &ps.initR)
}

// close closes every end still open.
func (ps *pipes) close() {
	ps.closeChildEnds()
	ps.closeParentEnds()
}

// initReport reads what the init reported, until EOF: a successful exec
// closes the pipe (close-on-exec) with nothing written. Nothing without
// an init; an error when the report cannot be read.
func (ps *pipes) initReport() ([]byte, error) {
	if ps.initR == nil {
		return nil, nil
	}
	return readInitReport(ps.initR)
}

// initRecord reads the init's first record whole, and no further: a
// reaper writes its record before it exits, and its exit can take
// milliseconds. eof says the pipe has ended (after fewer bytes than a
// record, or none); otherwise initReport reads the rest.
func (ps *pipes) initRecord() (b []byte, eof bool, err error) {
	if ps.initR == nil {
		return nil, true, nil
	}
	return readInitRecord(ps.initR)
}

// closeFiles closes each open file and forgets it.
func closeFiles(files ...**os.File) {
	for _, f := range files {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
}
