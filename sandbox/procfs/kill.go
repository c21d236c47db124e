package procfs

import (
	"time"

	"golang.org/x/sys/unix"
)

// Killer sends SIGKILL through pidfds, so a recycled PID is never hit, and
// waits until the processes have exited. The zero Killer is ready to use.
type Killer struct {
	fds []int
}

// Kill sends SIGKILL to pid and reports whether the process was there.
func (k *Killer) Kill(pid int) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false
	}
	unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	k.fds = append(k.fds, fd)
	return true
}

// Wait waits until every killed process has exited (its pidfd turns
// readable; it may stay a zombie until its parent reaps it), or until
// limit has passed. It reports whether all exited, and releases the pidfds.
func (k *Killer) Wait(limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	all := true
	for _, fd := range k.fds {
		for {
			left := time.Until(deadline)
			if left <= 0 {
				all = false
				break
			}
			n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left.Milliseconds())+1)
			if err == unix.EINTR {
				continue
			}
			if n == 0 && err == nil {
				continue
			}
			break
		}
		unix.Close(fd)
	}
	k.fds = nil
	return all
}

// KillWithArg kills every live process tagged with arg (see WithArg) and
// waits for them; it repeats until none is left, since a tagged process
// may fork while it is being killed. It returns how many it killed.
func KillWithArg(arg string, limit time.Duration) int {
	return killAll(func() []Proc { return WithArg(arg) }, limit)
}

// KillWithArgPrefix is KillWithArg for every tag that begins with prefix.
func KillWithArgPrefix(prefix string, limit time.Duration) int {
	return killAll(func() []Proc { return WithArgPrefix(prefix) }, limit)
}

// KillPIDs kills what list returns until it returns nothing.
func KillPIDs(list func() []int, limit time.Duration) int {
	return killAll(func() []Proc {
		var ps []Proc
		for _, pid := range list() {
			ps = append(ps, Proc{PID: pid})
		}
		return ps
	}, limit)
}

func killAll(list func() []Proc, limit time.Duration) int {
	killed := 0
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		var k Killer
		n := 0
		for _, p := range list() {
			if k.Kill(p.PID) {
				n++
			}
		}
		k.Wait(time.Until(deadline))
		if n == 0 {
			break
		}
		killed += n
	}
	return killed
}
