package boot

import (
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// EgressInit is what the init needs to open the program's way to the
// proxy.
type EgressInit struct {
	// FD is the init's end of the socket pair to the host.
	FD int `json:"fd"`
	// Port is the port bound on 127.0.0.1 in the network namespace.
	Port int `json:"port"`
}

// open runs in the init, in the program's network namespace and before
// the capabilities are dropped: it brings loopback up, binds the proxy's
// port, and hands the listener to the host.
func (c EgressInit) open() error {
	if err := loopbackUp(); err != nil {
		return err
	}
	ln, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("making the egress listener: %w", err)
	}
	defer unix.Close(ln)
	if err := unix.Bind(ln, &unix.SockaddrInet4{Port: c.Port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("binding the egress proxy's address 127.0.0.1:%s: %w", strconv.Itoa(c.Port), err)
	}
	if err := unix.Listen(ln, unix.SOMAXCONN); err != nil {
		return fmt.Errorf("listening on the egress proxy's address: %w", err)
	}
	if err := unix.Sendmsg(c.FD, []byte{0}, unix.UnixRights(ln), nil, 0); err != nil {
		return fmt.Errorf("handing the egress listener to the host: %w", err)
	}
	return unix.Close(c.FD)
}

// loopbackUp brings the namespace's loopback interface up.
func loopbackUp() error {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bringing loopback up: %w", err)
	}
	defer unix.Close(s)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("bringing loopback up: %w", err)
	}
	if err := unix.IoctlIfreq(s, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing loopback up: reading its flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing loopback up: %w", err)
	}
	return nil
}
