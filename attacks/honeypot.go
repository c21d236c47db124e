package attacks

import (
	"fmt"
	"net"
	"sync"
	"time"
)

// honeypot is a TCP listener on a random loopback port that records every
// byte it receives. It listens on 127.0.0.1 only: the attack needs no
// traffic beyond loopback to prove a way out.
type honeypot struct {
	ln      *net.TCPListener
	loop    sync.WaitGroup
	readers sync.WaitGroup

	mu       sync.Mutex
	conns    int
	received int64
	sample   []byte // the first bytes received, for the evidence

	closeOnce sync.Once
}

// honeypotReadLimit bounds how long one connection is read.
const honeypotReadLimit = 2 * time.Second

func startHoneypot() (*honeypot, error) {
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, fmt.Errorf("starting honeypot: %w", err)
	}
	h := &honeypot{ln: ln}
	h.loop.Add(1)
	go h.accept()
	return h, nil
}

// port is the port the honeypot listens on.
func (h *honeypot) port() int { return h.ln.Addr().(*net.TCPAddr).Port }

func (h *honeypot) accept() {
	defer h.loop.Done()
	for {
		c, err := h.ln.AcceptTCP()
		if err != nil {
			return // closed, or the deadline set by close passed
		}
		h.mu.Lock()
		h.conns++
		h.mu.Unlock()
		h.readers.Add(1)
		go h.read(c)
	}
}

func (h *honeypot) read(c *net.TCPConn) {
	defer h.readers.Done()
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(honeypotReadLimit))
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			h.mu.Lock()
			h.received += int64(n)
			if len(h.sample) < 64 {
				h.sample = append(h.sample, buf[:min(n, 64-len(h.sample))]...)
			}
			h.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// close stops the honeypot once everything that reached it has been read.
// Call it when no attack process is left: a connection made before then
// sits in the listen backlog, and Accept takes it before the short
// deadline passes. Calling it again does nothing.
func (h *honeypot) close() {
	h.closeOnce.Do(func() {
		h.ln.SetDeadline(time.Now().Add(50 * time.Millisecond))
		h.loop.Wait()
		h.ln.Close()
		h.readers.Wait()
	})
}

// got returns what the honeypot received; call it after close.
func (h *honeypot) got() (conns int, received int64, sample []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conns, h.received, h.sample
}
