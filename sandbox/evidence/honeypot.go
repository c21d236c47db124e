package evidence

import (
	"fmt"
	"net"
	"os"
	"sync"
	"time"
)

// Honeypot is a listener that records what reaches it: the connections,
// the bytes and the first of them. It listens on a random port of
// 127.0.0.1 (a program needs no traffic beyond loopback to prove it has a
// way out) or on a Unix socket the harness made, standing in for a host
// service. Its owner starts it, hands its address to the program, and
// closes it once no process of the program is left.
type Honeypot struct {
	ln      deadlineListener
	loop    sync.WaitGroup
	readers sync.WaitGroup

	mu       sync.Mutex
	conns    int
	received int64
	sample   []byte // the first bytes received, for the evidence

	closeOnce sync.Once
}

const (
	// honeypotReadLimit bounds how long one connection is read.
	honeypotReadLimit = 2 * time.Second
	// honeypotSample is how many of the first bytes received are kept.
	honeypotSample = 64
)

// deadlineListener is a listener whose Accept can be given a deadline.
type deadlineListener interface {
	net.Listener
	SetDeadline(time.Time) error
}

// StartHoneypot starts a honeypot on a random loopback port.
func StartHoneypot() (*Honeypot, error) {
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, fmt.Errorf("starting honeypot: %w", err)
	}
	return serve(ln), nil
}

// StartUnixHoneypot starts a honeypot on a Unix socket at path, which
// anyone may connect to (mode 0666), as a host service's socket often is.
// Close removes the socket.
func StartUnixHoneypot(path string) (*Honeypot, error) {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("starting honeypot on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		ln.Close()
		return nil, fmt.Errorf("starting honeypot on %s: %w", path, err)
	}
	return serve(ln), nil
}

func serve(ln deadlineListener) *Honeypot {
	h := &Honeypot{ln: ln}
	h.loop.Add(1)
	go h.accept()
	return h
}

// Port is the port a TCP honeypot listens on.
func (h *Honeypot) Port() int { return h.ln.Addr().(*net.TCPAddr).Port }

func (h *Honeypot) accept() {
	defer h.loop.Done()
	for {
		c, err := h.ln.Accept()
		if err != nil {
			return // closed, or the deadline set by Close passed
		}
		h.mu.Lock()
		h.conns++
		h.mu.Unlock()
		h.readers.Add(1)
		go h.read(c)
	}
}

func (h *Honeypot) read(c net.Conn) {
	defer h.readers.Done()
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(honeypotReadLimit))
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			h.mu.Lock()
			h.received += int64(n)
			if len(h.sample) < honeypotSample {
				h.sample = append(h.sample, buf[:min(n, honeypotSample-len(h.sample))]...)
			}
			h.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// Close stops the honeypot once everything that reached it has been read.
// Call it when no process of the program is left: a connection made
// before then sits in the listen backlog, and Accept takes it before the
// short deadline passes. Calling it again does nothing.
func (h *Honeypot) Close() {
	h.closeOnce.Do(func() {
		h.ln.SetDeadline(time.Now().Add(50 * time.Millisecond))
		h.loop.Wait()
		h.ln.Close()
		h.readers.Wait()
	})
}

// Received closes the honeypot (see Close: call it when no process of the
// program is left) and returns what it received: the connections, the
// bytes and the first of them.
func (h *Honeypot) Received() (conns int, received int64, sample []byte) {
	h.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conns, h.received, h.sample
}
