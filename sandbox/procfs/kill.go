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

// Kill sends SIGKILL to the process that has pid now and reports whether
// there was one. Where pid was read from /proc a moment ago, use KillProc:
// the process may have ended since, and its pid been given to another.
func (k *Killer) Kill(pid int) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false
	}
	unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	k.fds = append(k.fds, fd)
	return true
}

// KillProc sends SIGKILL to the process p was read from (Scan, Stat,
// WithArg) and reports whether it was still there. Once it holds a pidfd
// for p.PID it reads /proc again: if the process the pidfd refers to is
// still running after that read, the read was of that process, and its
// start time says whether it is p or a later process that was given p's
// pid. A process that ended in between is not signalled, and a pidfd
// never reaches a process that took the pid afterwards.
func (k *Killer) KillProc(p Proc) bool {
	fd, err := unix.PidfdOpen(p.PID, 0)
	if err != nil {
		return false
	}
	now, err := Stat(p.PID)
	if err != nil || now.Start != p.Start || exited(fd) {
		unix.Close(fd)
		return false
	}
	unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	k.fds = append(k.fds, fd)
	return true
}

// exited reports whether the process a pidfd refers to has exited (the
// pidfd turns readable).
func exited(fd int) bool {
	for {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
		if err == unix.EINTR {
			continue
		}
		return err != nil || n > 0
	}
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
			if p.Start != 0 && k.KillProc(p) || p.Start == 0 && k.Kill(p.PID) {
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
