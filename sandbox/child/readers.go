package child

import (
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Readers copies a process's output pipes, each in a goroutine of its
// own, until they reach EOF: when the process and everything that
// inherited the pipes are gone. The zero Readers is ready to use.
type Readers struct {
	wg    sync.WaitGroup
	files []*os.File
	dsts  []io.Writer
}

// Read copies f into w until EOF, or until Drain or Collect ends the
// copy. f must be a pipe's read end from os.Pipe (non-blocking). Start
// every read before Drain or Collect.
func (r *Readers) Read(f *os.File, w io.Writer) {
	r.files = append(r.files, f)
	r.dsts = append(r.dsts, w)
	r.wg.Go(func() { io.Copy(w, f) })
}

// Collect ends the copies without waiting for EOF, for a caller who
// knows that the pipes hold all they ever will: every writer has ended
// but ones that will write nothing more (the init of a PID namespace that
// outlives its program, holding the pipes it started with). It stops the
// copies, takes what the pipes hold, in order, and closes the read ends.
func (r *Readers) Collect() {
	for _, f := range r.files {
		f.SetReadDeadline(time.Unix(1, 0)) // a copy blocked in a read returns
	}
	r.wg.Wait()
	for i, f := range r.files {
		// A read past its deadline fails before it reads; the bytes left
		// are read by hand, up to EAGAIN.
		f.SetReadDeadline(time.Time{})
		if sc, err := f.SyscallConn(); err == nil {
			sc.Read(func(fd uintptr) bool {
				readAvailable(int(fd), r.dsts[i])
				return true
			})
		}
		f.Close()
	}
}

// readAvailable copies what fd, non-blocking, holds now into w.
func readAvailable(fd int, w io.Writer) {
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if n <= 0 {
			return // EAGAIN: nothing more now; 0: EOF
		}
		w.Write(buf[:n])
	}
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
