package child

import (
	"io"
	"os"
	"sync"
	"time"
)

// Readers copies a process's output pipes, each in a goroutine of its
// own, until they reach EOF: when the process and everything that
// inherited the pipes are gone. The zero Readers is ready to use.
type Readers struct {
	wg    sync.WaitGroup
	files []*os.File
}

// Read copies f into w until EOF, or until Drain closes f. Start every
// read before Drain.
func (r *Readers) Read(f *os.File, w io.Writer) {
	r.files = append(r.files, f)
	r.wg.Go(func() { io.Copy(w, f) })
}

// Drain waits for every copy to reach EOF, but no longer than grace: a
// process that escaped the run may hold a pipe open. Then it closes the
// read ends, which ends a copy still blocked in a read, waits for the
// copies and reports whether they had all ended by themselves.
func (r *Readers) Drain(grace time.Duration) bool {
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	ended := true
	select {
	case <-done:
	case <-timer.C:
		ended = false
	}
	for _, f := range r.files {
		f.Close() // the pipes are non-blocking: a blocked read returns
	}
	<-done
	return ended
}
