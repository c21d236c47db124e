package sandbox

import "os"

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
	return ps, nil
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

// closeFiles closes each open file and forgets it.
func closeFiles(files ...**os.File) {
	for _, f := range files {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
}
