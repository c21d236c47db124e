package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"golang.org/x/sys/unix"

	"sandboxlab/sandbox/egress"
)

// The program's way to the egress proxy lives and dies with its run. The
// init, already in the program's network namespace, brings loopback up,
// binds EgressProxy there, and hands the listening socket to the host over
// a socket pair (SCM_RIGHTS) before it execs the program, closing its own
// copy. The host accepts on that socket, which stays in the program's
// namespace, and serves the proxy on it: no socket on disk for anything
// else to reach, no setns (which a Go process cannot do for a user
// namespace), no relay process inside, and it works unprivileged. When the
// run ends the host closes the listener and every connection, and the
// namespace goes with them.

// egressRelay is the host's side of one run's way out.
type egressRelay struct {
	proxy  egress.Server
	host   *net.UnixConn // the host's end of the socket pair
	child  *os.File      // the init's end, closed once the init holds it
	served chan struct{} // closed when the listener has been served
	// onHost is the egress_host_network defect's listener: the proxy on
	// the host's own loopback, for a program that kept the host's network.
	onHost net.Listener
}

// newEgress makes the relay for p, or returns nil when p's requests do
// not go through the proxy.
func newEgress(p Policy) (*egressRelay, error) {
	if !p.Network.Egress() {
		return nil, nil
	}
	proxy, err := egress.NewServer(p.Network.egressConfig())
	if errors.Is(err, egress.ErrNotLinked) {
		// The policy is sound; this binary cannot serve it.
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if err != nil {
		return nil, &PolicyError{Field: "Network", Err: err}
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		proxy.Close()
		return nil, fmt.Errorf("creating the egress socket pair: %w", err)
	}
	f := os.NewFile(uintptr(fds[0]), "egress-host")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		unix.Close(fds[1])
		proxy.Close()
		return nil, fmt.Errorf("creating the egress socket pair: %w", err)
	}
	return &egressRelay{proxy: proxy, host: c.(*net.UnixConn), child: os.NewFile(uintptr(fds[1]), "egress-init"),
		served: make(chan struct{})}, nil
}

// proxyEnv names the proxy at addr for the program, in the forms its
// libraries read (Python's urllib, curl, Go and most others).
func proxyEnv(addr string) []string {
	url := "http://" + addr
	return []string{"http_proxy=" + url, "HTTP_PROXY=" + url, "https_proxy=" + url, "HTTPS_PROXY=" + url}
}

// started closes the init's end (the started init holds its own) and
// serves the listener the init hands over, until finish.
func (e *egressRelay) started() {
	if e == nil {
		return
	}
	e.child.Close()
	go func() {
		defer close(e.served)
		if e.onHost != nil {
			e.proxy.Serve(e.onHost)
			return
		}
		ln, err := receiveListener(e.host)
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed):
			return // the init failed before handing it over, and says why on its own pipe
		case err != nil:
			// The program runs with a proxy nobody serves: nothing gets
			// out, and the log says why.
			e.proxy.Note("the proxy's listener never arrived: " + err.Error())
			return
		}
		e.proxy.Serve(ln)
	}()
}

// finish stops the proxy once the run is over, closing the listener in
// the program's namespace and every connection, and returns the log and
// how many requests came past its limit. Nil-safe: no relay, no log.
func (e *egressRelay) finish() ([]egress.Request, int) {
	if e == nil {
		return nil, 0
	}
	e.host.Close()
	e.proxy.Close()
	<-e.served
	return e.proxy.Requests(), e.proxy.Dropped()
}

// discard releases a relay whose init never started.
func (e *egressRelay) discard() {
	e.child.Close()
	e.host.Close()
	if e.onHost != nil {
		e.onHost.Close()
	}
	e.proxy.Close()
}

// listenOnHost is the egress_host_network defect's way out: the proxy
// listens on the host's loopback, on a port of its own, and the program,
// left on the host's network, is trusted to use it. It returns the
// address.
func (e *egressRelay) listenOnHost() (*net.TCPAddr, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the egress proxy: %w", err)
	}
	e.onHost = ln
	return ln.Addr().(*net.TCPAddr), nil
}

// receiveListener receives the listening socket the init sends on c.
func receiveListener(c *net.UnixConn) (net.Listener, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	var n, oobn int
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		// MSG_CMSG_CLOEXEC: another run's fork must not inherit it.
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
		return rerr != unix.EAGAIN
	})
	switch {
	case err != nil:
		return nil, err
	case rerr != nil:
		return nil, rerr
	case n == 0:
		return nil, io.EOF
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, errors.New("no listener in the init's message")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, errors.New("no listener in the init's message")
	}
	f := os.NewFile(uintptr(fds[0]), "egress-listener")
	defer f.Close()
	return net.FileListener(f)
}
