// Package procfs reads the host's process table from /proc. The sandbox's
// supervisor, the checks and the attack harness all judge "is it still
// running?" from here, so there is one parser for /proc/N/stat.
package procfs

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Proc is one process as /proc shows it to the caller (host PID numbers).
type Proc struct {
	PID, PPID, PGID, SID int
	// Comm is the command name (the first 15 bytes of the executable's name).
	Comm string
	// State is the one-letter state from /proc/N/stat ("R", "S", "Z", ...).
	State byte
	// Start is when the process started, in clock ticks after boot: with
	// the PID it names one process for good, since a PID is reused only
	// by a process that starts later.
	Start uint64
	// CPU is the user and system time the process has used so far.
	CPU time.Duration
}

// userHZ is the unit of the times in /proc/N/stat: USER_HZ, which Linux
// fixes at 100 for user space on every architecture this code builds for,
// whatever the kernel's own tick rate.
const userHZ = 100

// Started is when the process started by the host's clock, to the tick:
// its start after boot set against the time since boot now. The result
// carries a monotonic reading, so it can be subtracted from other
// time.Now values; it is zero when the boot clock cannot be read.
func (p Proc) Started() time.Time {
	now := time.Now()
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return time.Time{}
	}
	age := time.Duration(ts.Nano()) - time.Duration(p.Start)*time.Second/userHZ
	return now.Add(-age)
}

// Alive reports whether the process can still run: a zombie or a dead
// entry has finished even though kill(pid, 0) still succeeds.
func (p Proc) Alive() bool { return p.State != 'Z' && p.State != 'X' && p.State != 'x' }

// Scan returns every process in /proc. Processes that vanish while it reads
// are skipped.
func Scan() ([]Proc, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	procs := make([]Proc, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		p, err := Stat(pid)
		if err != nil {
			continue
		}
		procs = append(procs, p)
	}
	return procs, nil
}

// Stat reads /proc/PID/stat.
func Stat(pid int) (Proc, error) {
	var buf [statBuf]byte
	b, err := readSmall("/proc/"+strconv.Itoa(pid)+"/stat", buf[:0])
	if err != nil {
		return Proc{}, err
	}
	return parseStat(pid, b)
}

// statBuf holds a whole /proc/PID/stat line: about 300 bytes, a 64-byte
// comm at most, 52 numbers.
const statBuf = 1024

// readSmall reads the whole of a small file into buf (growing it if it
// must). The supervisor reads /proc files every few milliseconds, so this
// costs three system calls where os.ReadFile spends nine (an os.File
// registers with the poller, probes and stats the file first).
func readSmall(path string, buf []byte) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	for err == unix.EINTR {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// parseStat parses "pid (comm) S ppid pgrp session ...". comm may hold
// spaces and parentheses, so fields are counted from the last ')'.
func parseStat(pid int, b []byte) (Proc, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return Proc{}, os.ErrInvalid
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return Proc{}, os.ErrInvalid
	}
	p := Proc{PID: pid, State: f[0][0]}
	if open := bytes.IndexByte(b, '('); open >= 0 && open < i {
		p.Comm = string(b[open+1 : i])
	}
	var err error
	if p.PPID, err = strconv.Atoi(f[1]); err != nil {
		return Proc{}, err
	}
	if p.PGID, err = strconv.Atoi(f[2]); err != nil {
		return Proc{}, err
	}
	if p.SID, err = strconv.Atoi(f[3]); err != nil {
		return Proc{}, err
	}
	// starttime is field 22 of the line, the 20th after the comm.
	if p.Start, err = strconv.ParseUint(f[19], 10, 64); err != nil {
		return Proc{}, err
	}
	// utime and stime are fields 14 and 15, the 12th and 13th after it.
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return Proc{}, os.ErrInvalid
	}
	p.CPU = time.Duration(utime+stime) * time.Second / userHZ
	return p, nil
}

// Descendants returns the processes below root (not root itself), following
// parent links in procs.
func Descendants(procs []Proc, root int) []Proc {
	children := make(map[int][]Proc)
	for _, p := range procs {
		children[p.PPID] = append(children[p.PPID], p)
	}
	var out []Proc
	queue := []int{root}
	seen := map[int]bool{root: true}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if !seen[c.PID] {
				seen[c.PID] = true
				out = append(out, c)
				queue = append(queue, c.PID)
			}
		}
	}
	return out
}

// Tree returns the processes below root (not root itself), as
// Descendants(Scan(), root) does, but found through the kernel's list of
// each thread's children (/proc/PID/task/TID/children) instead of a scan
// of every process on the host: its cost follows the size of root's
// tree, not the host's process count, which matters to a monitor that
// looks every few milliseconds while the program starts. Every thread's
// list is read, since a child belongs to the thread that forked it.
// Processes that end while it reads are left out; it returns nil when
// root is gone.
func Tree(root int) []Proc {
	var out []Proc
	seen := map[int]bool{root: true}
	queue := []int{root}
	var buf [statBuf]byte
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children(pid, buf[:0]) {
			if seen[c] {
				continue
			}
			seen[c] = true
			p, err := Stat(c)
			if err != nil {
				continue // gone since its parent's list was read
			}
			out = append(out, p)
			queue = append(queue, c)
		}
	}
	return out
}

// children returns the pids in the children lists of every thread of
// pid, using buf for the reads.
func children(pid int, buf []byte) []int {
	task := "/proc/" + strconv.Itoa(pid) + "/task"
	d, err := os.Open(task)
	if err != nil {
		return nil
	}
	tids, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil
	}
	var out []int
	for _, tid := range tids {
		b, err := readSmall(task+"/"+tid+"/children", buf[:0])
		if err != nil {
			continue // the thread ended
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// Cmdline returns the NUL-separated arguments of pid, or nil if it is gone.
func Cmdline(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// Tag returns a fresh random tag for a program's command line. It
// carries this process's pid (see TagPrefix), so that whoever started
// this process can find whatever it left behind, even after it died.
func Tag() string {
	b := make([]byte, 8)
	Random(b)
	return TagPrefix(os.Getpid()) + hex.EncodeToString(b)
}

// Random fills b from the kernel's random source, as crypto/rand does
// (getrandom), without linking crypto/rand: that would link the FIPS 140
// module, whose initialisers every start of the CLI and of a run would
// pay for, for a name's random part.
func Random(b []byte) error {
	for len(b) > 0 {
		n, err := unix.Getrandom(b, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading random bytes: %w", err)
		}
		b = b[n:]
	}
	return nil
}

// TagPrefix is how every tag made by process pid begins.
func TagPrefix(pid int) string { return "sbx" + strconv.Itoa(pid) + "-" }

// WithArgPrefix returns the live processes with an argument that begins
// with prefix.
func WithArgPrefix(prefix string) []Proc {
	return matching([]byte(prefix), func(a string) bool { return strings.HasPrefix(a, prefix) })
}

// WithArg returns the live processes whose command line contains arg as
// one whole argument. Harness code tags the programs it starts with a
// random token argument, so this finds them (and whatever they forked
// without exec) wherever they were reparented and whatever session or
// namespace they moved to.
func WithArg(arg string) []Proc {
	return matching([]byte(arg), func(a string) bool { return a == arg })
}

// WithArgAmong is WithArg among the processes pids only.
func WithArgAmong(pids []int, arg string) []Proc {
	return matchingIn(pids, []byte(arg), func(a string) bool { return a == arg })
}

// WithArgPrefixAmong is WithArgPrefix among the processes pids only.
func WithArgPrefixAmong(pids []int, prefix string) []Proc {
	return matchingIn(pids, []byte(prefix), func(a string) bool { return strings.HasPrefix(a, prefix) })
}

// matching returns the live processes with an argument that match
// accepts. Samplers call it every few milliseconds while a run goes on,
// so it reads each command line into one buffer and parses the stat file
// only of a process whose command line holds needle at all: the cost is
// one read per process on the host, not two and a parse.
func matching(needle []byte, match func(arg string) bool) []Proc {
	return matchingIn(pids(), needle, match)
}

// pids lists the processes in /proc (nil if it cannot be read).
func pids() []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil
	}
	out := make([]int, 0, len(names))
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		if pid, err := strconv.Atoi(n); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// matchingIn is matching over the processes pids.
func matchingIn(pids []int, needle []byte, match func(arg string) bool) []Proc {
	buf := make([]byte, 64<<10)
	var out []Proc
	for _, pid := range pids {
		b := readInto(buf, "/proc/"+strconv.Itoa(pid)+"/cmdline")
		if !bytes.Contains(b, needle) {
			continue
		}
		for _, a := range strings.Split(strings.TrimRight(string(b), "\x00"), "\x00") {
			if match(a) {
				if p, err := Stat(pid); err == nil && p.Alive() {
					out = append(out, p)
				}
				break
			}
		}
	}
	return out
}

// Newcomers finds processes started after it was made. A search for a
// program that lives a few tens of milliseconds, anywhere on the host,
// cannot read hundreds of command lines each time it looks: on a loaded
// machine one such pass took up to 100 ms and the program came and went
// between two. Newcomers lists /proc and reads only the processes it did
// not list at the start. A PID that is gone from a listing is forgotten,
// so that when it is used again the new process is read; one that ended
// and was reused between two listings is not, and is missed.
type Newcomers struct{ old map[int]bool }

// NewNewcomers remembers the processes there are now.
func NewNewcomers() *Newcomers {
	n := &Newcomers{old: map[int]bool{}}
	for _, pid := range pids() {
		n.old[pid] = true
	}
	return n
}

// WithArg is WithArg among the processes started since n was made.
func (n *Newcomers) WithArg(arg string) []Proc {
	return matchingIn(n.fresh(), []byte(arg), func(a string) bool { return a == arg })
}

// WithArgPrefix is WithArgPrefix among the processes started since n was
// made.
func (n *Newcomers) WithArgPrefix(prefix string) []Proc {
	return matchingIn(n.fresh(), []byte(prefix), func(a string) bool { return strings.HasPrefix(a, prefix) })
}

// fresh lists the processes started since n was made, and forgets those
// of its start that are gone.
func (n *Newcomers) fresh() []int {
	now := pids()
	present := make(map[int]bool, len(now))
	fresh := now[:0:0]
	for _, pid := range now {
		present[pid] = true
		if !n.old[pid] {
			fresh = append(fresh, pid)
		}
	}
	for pid := range n.old {
		if !present[pid] {
			delete(n.old, pid)
		}
	}
	return fresh
}

// readInto reads the file at path into buf and returns what it read (nil
// if it could not be read). A command line longer than buf is cut, which
// only a tag placed past its first 64 KiB could suffer from.
func readInto(buf []byte, path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	n := 0
	for n < len(buf) {
		k, err := f.Read(buf[n:])
		n += k
		if err != nil || k == 0 {
			break
		}
	}
	return buf[:n]
}

// Killed reports whether pid has a SIGKILL pending: it has been killed
// and is on its way out, even if /proc still shows it running. A slow
// exit on a loaded machine is then not mistaken for a process nobody
// stopped.
func Killed(pid int) bool {
	b := readStatus(pid)
	return b == nil || killedIn(b) // gone, or killed
}

// readStatus reads /proc/PID/status; nil when the process is gone.
func readStatus(pid int) []byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return nil
	}
	return b
}

// killedIn reports whether /proc/PID/status text shows a SIGKILL pending.
func killedIn(status []byte) bool {
	const sigkill = 1 << (9 - 1)
	for _, field := range []string{"SigPnd", "ShdPnd"} {
		if mask, err := strconv.ParseUint(StatusField(status, field), 16, 64); err == nil && mask&sigkill != 0 {
			return true
		}
	}
	return false
}

// Living returns those of procs that are not on their way out. A process
// is on its way out when it is gone, when it has a SIGKILL pending, or
// when the init of its PID namespace has one: the kernel kills every
// process of a namespace when its init exits, and an init cannot ignore a
// SIGKILL sent from outside its namespace. Until that init is next
// scheduled, which on a loaded machine can take a hundred milliseconds,
// the rest of its namespace goes on running and forking: counting them
// would blame the stop for the scheduler's delay.
func Living(procs []Proc) []Proc {
	return living(procs, readStatus, func(pid int) string {
		ns, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
		return ns
	})
}

// living is Living with /proc's two reads passed in, so that the rule can
// be tested on states the kernel holds too briefly to catch.
func living(procs []Proc, status func(pid int) []byte, pidNS func(pid int) string) []Proc {
	var alive []Proc
	doomed := map[string]bool{} // PID namespaces whose init is killed
	for _, p := range procs {
		b := status(p.PID)
		if b == nil {
			continue // gone
		}
		if !killedIn(b) {
			alive = append(alive, p)
			continue
		}
		// NSpid lists the PID in each namespace from the host's down: a
		// last entry of 1 below the host's is a namespace's init.
		nspid := strings.Fields(StatusField(b, "NSpid"))
		if len(nspid) > 1 && nspid[len(nspid)-1] == "1" {
			if ns := pidNS(p.PID); ns != "" {
				doomed[ns] = true
			}
		}
	}
	if len(doomed) == 0 {
		return alive
	}
	kept := alive[:0]
	for _, p := range alive {
		if !doomed[pidNS(p.PID)] {
			kept = append(kept, p)
		}
	}
	return kept
}

// StatusField returns the value of one field of /proc/PID/status text,
// named without its colon ("CapEff", "VmPeak"), with the white space
// around it trimmed; "" when the text has no such field. It is the one
// parser of that file: sandbox/evidence reads its fields through it.
func StatusField(status []byte, name string) string {
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Owner names the calling process for good, for the names of what it
// makes and must remove (a control group, a temporary directory): its pid
// and its start time, "<pid>-<start>", which a later process that reuses
// the pid does not share. A process killed before it could clean up
// leaves names that OwnerGone recognises.
func Owner() string {
	me, err := Stat(os.Getpid())
	if err != nil {
		return strconv.Itoa(os.Getpid()) + "-0"
	}
	return strconv.Itoa(me.PID) + "-" + strconv.FormatUint(me.Start, 10)
}

// OwnerGone reports whether the owner named at the start of rest
// ("<pid>-<start>..." as Owner made it) has ended. A name it cannot read,
// or an owner that may still be running, is not gone: a sweep errs on the
// side of leaving things.
func OwnerGone(rest string) bool {
	f := strings.SplitN(rest, "-", 3)
	if len(f) < 2 {
		return false
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 || start == 0 {
		return false
	}
	return Ended(pid, start)
}

// Orphaned returns the entries of parent named prefix+Owner()+"..." whose
// owner has ended (OwnerGone): what a process killed before it could
// clean up left there.
func Orphaned(parent, prefix string) []string {
	dirs, _ := filepath.Glob(filepath.Join(parent, prefix+"*"))
	var out []string
	for _, dir := range dirs {
		if OwnerGone(strings.TrimPrefix(filepath.Base(dir), prefix)) {
			out = append(out, dir)
		}
	}
	return out
}

// Ended reports whether the process that had pid and started at start
// (Proc.Start) has ended: no process has the pid, or the one that has it
// started at another time (the pid was reused), or it is a zombie.
func Ended(pid int, start uint64) bool {
	p, err := Stat(pid)
	if err != nil {
		return true // no such process
	}
	return p.Start != start || !p.Alive()
}
