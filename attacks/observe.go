package attacks

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
)

// isolation is what the host saw of the program's surroundings, read from
// the host's /proc while it ran. The judges name the mechanism that
// stopped an attack from it, so that a layer the policy asked for but a
// defect took away gets no credit. Where the host could not look in time,
// the fields say what the policy asks for and the evidence says so.
type isolation struct {
	// seen: the host read the run's first process (the sandbox's init or
	// the program; both have the namespaces, working directory and
	// environment the program gets).
	seen bool
	// ownPID, ownNet, ownMount, ownUser and ownIPC: it had a namespace
	// of that kind of its own, not the host's.
	ownPID, ownNet, ownMount, ownUser, ownIPC bool
	// cwd is its working directory.
	cwd string
	// envHasKey: the fake API key was in its environment.
	envHasKey bool

	// programSeen: the host read the program itself, after the init had
	// set everything up and execed it.
	programSeen bool
	// capEff and capBnd are its effective and bounding capability sets.
	capEff, capBnd uint64
	// homeCovered: something was mounted over the fake home in its mount
	// namespace.
	homeCovered bool
	// privateTmp lists the scratch directories (Filesystem.Private) with
	// a tmpfs of its own over them in its mount namespace.
	privateTmp []string
	// sessionsCovered: the directory holding the cell's sessions had a
	// tmpfs of its own over it, with the program's session bound back.
	sessionsCovered bool
}

// private reports whether the program had a private tmpfs over dir.
func (iso *isolation) private(dir string) bool { return slices.Contains(iso.privateTmp, dir) }

// observeLimit bounds the search for the program.
const observeLimit = time.Second

// observePoll is the observer's interval: Python's start-up leaves it
// about 10 ms, and each look reads two or three small files.
var observePoll = unix.Timespec{Nsec: 200_000}

// startObserver finds the run's first process among the harness's
// children and reads its isolation: first as soon as it is there, then
// once more right after the program's exec (by the init itself, or at L6
// by the child the init forks), whose Python then spends about 10 ms
// starting up before the attack does anything. That window is short and
// Go's timers fire at millisecond granularity at best, so the observer
// polls every observePoll with a bare nanosleep, which blocks only its
// thread, until it has looked (typically within 20 ms). It used to poll
// without sleeping, and so used a CPU for as long as the init took,
// beside the very init it waited for; and at L6 it never found the
// program, and polled so for the whole run. On a machine too busy to
// look in time it gives up, and the judges fall back on the policy. It
// returns the function that stops it; the findings are in e.iso once
// that returns.
func (e *env) startObserver() (stop func()) {
	var quit atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		deadline := time.Now().Add(observeLimit)
		pid := 0
		for !quit.Load() && time.Now().Before(deadline) {
			unix.Nanosleep(&observePoll, nil)
			if pid == 0 {
				// A child shows the token once it has execed the init (or,
				// at L0, the program); before that it shares the
				// harness's memory, cwd and environment.
				if pid = e.tagged(childrenOf("self")); pid != 0 {
					e.readProcess(pid)
				}
				continue
			}
			if p, err := procfs.Stat(pid); err != nil || !p.Alive() {
				return // the program ended before the host could look
			}
			prog := pid
			if !e.isProgram(pid) {
				// At L6 the init stays PID 1 and forks the program: it is
				// the init's child, not the init execed.
				if prog = e.programChild(pid); prog == 0 {
					continue
				}
			}
			if !e.iso.seen {
				e.readProcess(pid)
			}
			e.readProgram(prog)
			return
		}
	}()
	return func() { quit.Store(true); <-done }
}

// isProgram reports whether pid has execed the cell's program. A read
// that races the exec may come back empty or torn; the PID stays the
// run's until the sandbox reaps it.
func (e *env) isProgram(pid int) bool {
	args := procfs.Cmdline(pid)
	return len(args) > 0 && args[0] == evidence.Python && slices.Contains(args, e.token)
}

// programChild returns the child of the init pid that has execed the
// cell's program, or 0.
func (e *env) programChild(pid int) int {
	for _, c := range childrenOf(strconv.Itoa(pid)) {
		if e.isProgram(c) {
			return c
		}
	}
	return 0
}

// childrenOf returns the PIDs of the children of process pid ("self":
// the harness's), of every thread's: a child belongs to the thread that
// forked it.
func childrenOf(pid string) []int {
	files, _ := filepath.Glob("/proc/" + pid + "/task/*/children")
	var out []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(s); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

// tagged returns the first of pids tagged with the cell's token, or 0.
func (e *env) tagged(pids []int) int {
	for _, pid := range pids {
		if slices.Contains(procfs.Cmdline(pid), e.token) {
			return pid
		}
	}
	return 0
}

// readProcess records the namespaces, working directory and environment
// of pid, if it is still the run's process after reading them all.
func (e *env) readProcess(pid int) {
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	var iso isolation
	own := func(kind string) (bool, bool) {
		mine, err1 := os.Readlink("/proc/self/ns/" + kind)
		its, err2 := os.Readlink(dir + "ns/" + kind)
		return mine != its, err1 == nil && err2 == nil
	}
	var ok [5]bool
	iso.ownPID, ok[0] = own("pid")
	iso.ownNet, ok[1] = own("net")
	iso.ownMount, ok[2] = own("mnt")
	iso.ownUser, ok[3] = own("user")
	iso.ownIPC, ok[4] = own("ipc")
	cwd, err1 := os.Readlink(dir + "cwd")
	environ, err2 := os.ReadFile(dir + "environ")
	if ok != [5]bool{true, true, true, true, true} || err1 != nil || err2 != nil || !e.stillRuns(pid) {
		return
	}
	e.iso.seen = true
	e.iso.ownPID, e.iso.ownNet, e.iso.ownMount, e.iso.ownUser, e.iso.ownIPC = iso.ownPID, iso.ownNet, iso.ownMount, iso.ownUser, iso.ownIPC
	e.iso.cwd = cwd
	e.iso.envHasKey = bytes.Contains(environ, []byte(apiKeyVar+"="+e.fx.apiKey))
}

// readProgram records the capabilities and mounts of the program, pid.
func (e *env) readProgram(pid int) {
	status, err1 := evidence.ReadStatus(pid)
	mounts, err2 := evidence.Mountinfo(pid)
	if err1 != nil || err2 != nil || !e.stillRuns(pid) {
		return
	}
	e.iso.programSeen = true
	e.iso.capEff = status.Hex("CapEff")
	e.iso.capBnd = status.Hex("CapBnd")
	e.iso.homeCovered = evidence.MountedOn(mounts, e.fx.home)
	e.iso.privateTmp = nil
	host, _ := evidence.Mountinfo(os.Getpid())
	for _, d := range sandbox.DefaultPrivate() {
		if evidence.PrivateTmpfs(mounts, host, d) {
			e.iso.privateTmp = append(e.iso.privateTmp, d)
		}
	}
	e.iso.sessionsCovered = evidence.PrivateTmpfs(mounts, host, e.fx.sessions)
}

// stillRuns reports whether pid is still a live process of the run, so
// that what was just read of it was not read of a successor.
func (e *env) stillRuns(pid int) bool {
	p, err := procfs.Stat(pid)
	return err == nil && p.Alive() && slices.Contains(procfs.Cmdline(pid), e.token)
}

// fillFromPolicy completes e.iso with what the policy asks for wherever
// the host did not see for itself.
func (e *env) fillFromPolicy() {
	p := e.policy
	if !e.iso.seen {
		e.iso.ownPID = p.Processes.Namespace
		e.iso.ownNet = p.Network.Isolate
		e.iso.ownMount = p.Processes.Namespace || len(p.Filesystem.Hide) > 0
		e.iso.ownUser = p.Processes.Namespace || p.Network.Isolate || len(p.Filesystem.Hide) > 0 || p.Filesystem.DropCapabilities
		e.iso.ownIPC = p.Filesystem.OwnIPC
		e.iso.cwd = e.fx.appDir
		if p.Workspace.Private {
			e.iso.cwd = e.session.Dir()
		}
		e.iso.envHasKey = !p.Workspace.ScrubEnv
	}
	if !e.iso.programSeen {
		e.iso.capEff, e.iso.capBnd = 0, 0
		if !p.Filesystem.DropCapabilities {
			e.iso.capBnd = ^uint64(0)
		}
		e.iso.homeCovered = slices.Contains(p.Filesystem.Hide, e.fx.home)
		e.iso.privateTmp = p.Filesystem.Private
		e.iso.sessionsCovered = len(p.Filesystem.Private) > 0
	}
}
