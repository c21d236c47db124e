// Package child holds a process its caller started, and the process's
// output, until the caller is done with them. It is the one way the
// sandbox's supervisor and the attack harness's backends
// (attacks/backends) watch and stop a run:
//
//   - Process watches the run's first process through a pidfd and
//     signals it there, and keeps it unreaped, so that its pid, and the
//     process group and session it leads, name the run and nothing else,
//     until every signal sent by number has been sent (see Held).
//   - Readers copies the output pipes and drains them with a grace.
//
// Finding the rest of the tree is procfs's (Tree, Scan), and killing it
// too (Killer, through pidfds).
//
// It is a package of its own, not part of procfs, because procfs reads
// the host's process table, where this holds the caller's own child and
// its pipes; and it lives under sandbox/ and imports only the standard
// library and x/sys, so that the library (which may import only its own
// tree, x/sys and the defect switch) and the harness share it without the
// library importing anything new.
package child

import (
	"errors"
	"sync"

	"golang.org/x/sys/unix"
)

// ErrReaped is returned for a signal by number asked after Reap: the pid
// may name another process by then.
var ErrReaped = errors.New("the process has been reaped")

// Process is a child of the caller's, from its start until it is reaped.
//
// A pid is freed only when its process has been reaped and no process
// has it as its process group or session id any more; from then on the
// kernel may give it to anyone. While the first process of a run is a
// zombie the caller has not reaped, its pid, its group id and its session
// id stay taken: a signal to them, or to a process /proc lists with them,
// can reach only the run. So every such signal is sent under Held, and
// Reap waits for the ones in progress and refuses any after.
type Process struct {
	pid int

	// StopIsEnd, when set and true, takes a traced stop for the
	// process's end, as the planted defect trace_stop_ended has it (see
	// WaitExit). It is asked only when such a stop comes, so that the
	// defect's site is reached only by runs that have one.
	StopIsEnd func() bool

	mu     sync.Mutex
	fd     int  // pidfd, -1 where the kernel gives none (or once closed)
	reaped bool // Reap has begun: nothing is signalled by number any more
}

// Hold takes hold of pid, a child of the caller's that nothing has waited
// for yet (so the pid is still its own). Without a pidfd (a kernel older
// than 5.3), signals go by pid, which stays safe until Reap.
func Hold(pid int) *Process {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		fd = -1
	}
	return &Process{pid: pid, fd: fd}
}

// PID is the process's pid.
func (p *Process) PID() int { return p.pid }

// si_code values of a SIGCHLD's siginfo (include/uapi/asm-generic/siginfo.h).
const (
	cldExited  = 1
	cldKilled  = 2
	cldDumped  = 3
	cldTrapped = 4
	cldStopped = 5
)

// ended reports whether a waitid's info says the process ended, and not
// that it stopped.
func ended(info unix.Siginfo) bool {
	return info.Code == cldExited || info.Code == cldKilled || info.Code == cldDumped
}

// WaitExit waits until the process has exited, and leaves it unreaped (a
// zombie, holding its pid). It must not be called once Reap has begun.
//
// A process that makes its parent its tracer (PTRACE_TRACEME) has its
// stops reported to the caller's waits whatever their options: such a
// stop is no end. Its report is taken, which would otherwise come back
// at once, and the wait goes on; the process stays stopped until the
// caller's deadline kills it.
func (p *Process) WaitExit() error {
	for {
		info, err := p.waitid(0)
		switch {
		case err == unix.EINTR:
			continue
		case err == nil && !ended(info) && !p.stopIsEnd():
			p.takeStop()
			continue
		}
		return err
	}
}

func (p *Process) stopIsEnd() bool { return p.StopIsEnd != nil && p.StopIsEnd() }

// takeStop takes a traced stop's report, which reaps nothing.
func (p *Process) takeStop() {
	var info unix.Siginfo
	if p.fd >= 0 && unix.Waitid(unix.P_PIDFD, p.fd, &info, unix.WSTOPPED|unix.WNOHANG, nil) != unix.EINVAL {
		return
	}
	unix.Waitid(unix.P_PID, p.pid, &info, unix.WSTOPPED|unix.WNOHANG, nil)
}

// Exited reports whether the process has exited, reaped or not. It never
// blocks, and never asks about a pid another process may have taken.
func (p *Process) Exited() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return true
	}
	info, err := p.waitid(unix.WNOHANG)
	return err == unix.ECHILD || (err == nil && info.Signo != 0 && (ended(info) || p.stopIsEnd()))
}

// waitid asks whether the process has exited, leaving it unreaped, with
// the given options besides. Asking by pid is as sure as by pidfd while
// the process is unreaped: it serves where the kernel has pidfds but
// cannot wait on them (5.3).
func (p *Process) waitid(options int) (unix.Siginfo, error) {
	var info unix.Siginfo
	options |= unix.WEXITED | unix.WNOWAIT
	if p.fd >= 0 {
		err := unix.Waitid(unix.P_PIDFD, p.fd, &info, options, nil)
		if err != unix.EINVAL {
			return info, err
		}
	}
	err := unix.Waitid(unix.P_PID, p.pid, &info, options, nil)
	return info, err
}

// Signal sends sig to the process alone, through its pidfd: once the
// process has been reaped it reaches nobody (ESRCH).
func (p *Process) Signal(sig unix.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fd >= 0 {
		return unix.PidfdSendSignal(p.fd, sig, nil, 0)
	}
	if p.reaped {
		return ErrReaped
	}
	return unix.Kill(p.pid, sig)
}

// SignalGroup sends sig to the process group the process leads (it must
// have been started as a group or session leader).
func (p *Process) SignalGroup(sig unix.Signal) error {
	err := ErrReaped
	p.Held(func(pid int) { err = unix.Kill(-pid, sig) })
	return err
}

// Held calls f with the pid while the process is not reaped, and reports
// whether it did: within f, the pid, and the group and session ids equal
// to it, belong to the process and its run alone (see Process). Reap
// waits until f has returned.
func (p *Process) Held(f func(pid int)) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return false
	}
	f(p.pid)
	return true
}

// Reap waits until no signal is being sent by number, refuses any from
// then on, calls wait (the caller's exec.Cmd.Wait, which reaps the
// process) and releases the pidfd.
func (p *Process) Reap(wait func() error) error {
	p.mu.Lock()
	p.reaped = true
	p.mu.Unlock()
	err := wait()
	p.mu.Lock()
	if p.fd >= 0 {
		unix.Close(p.fd)
		p.fd = -1
	}
	p.mu.Unlock()
	return err
}
