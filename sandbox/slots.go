package sandbox

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A run's wall clock measures the program, not the machine: a hundred
// runs started at once on two cores would otherwise spend their clocks
// queueing for the CPU, and an innocent program would be stopped at its
// wall limit without having been slow. So every run on the host, from
// any process that embeds the sandbox (an agent's parallel tool calls,
// several CI jobs, one MCP server per client), takes a slot before
// anything is set up and before its clock starts.
//
// A slot is a file in a directory every user can reach, locked with
// flock(2): the kernel releases the lock when the holder's descriptor
// closes, so a holder killed with SIGKILL frees its slot by itself, and
// locks taken through different open files conflict within one process
// too, so the same mechanism queues one process's own runs. Root and
// ordinary users share the queue (the files are opened read-only, which
// is all flock needs, whoever made them): they share the CPU too. The
// queue is for fairness, not a wall: a local user who holds every slot
// delays everyone's runs (never anyone's isolation), and a waiting run
// gives up after its bound with ReasonBusy, which says nothing ran.
// SANDBOXLAB_SLOTS_DIR names another directory (a private one opts out
// of sharing).

// DefaultMaxRunning is how many programs run at once on the host: two per
// CPU, so that each has at least half a CPU when all of them are busy.
func DefaultMaxRunning() int { return 2 * runtime.NumCPU() }

// DefaultQueueWait is how long a run waits for a slot before it is refused
// as busy.
const DefaultQueueWait = 2 * time.Minute

// slotsEnv names the directory of the slot files, overriding
// defaultSlotsDir.
const slotsEnv = "SANDBOXLAB_SLOTS_DIR"

// defaultSlotsDir is on a tmpfs every user may write (sticky, as /tmp).
const defaultSlotsDir = "/dev/shm/sandboxlab-slots"

// Queue is how one session's runs use the host's slots. The zero Queue
// is the default: DefaultMaxRunning slots, DefaultQueueWait.
type Queue struct {
	// Max is how many of the host's slots the runs use (0:
	// DefaultMaxRunning). Sessions that use fewer slots than others queue
	// on the first ones only.
	Max int
	// Wait is how long a run waits for a slot before it is refused as
	// busy (0: DefaultQueueWait).
	Wait time.Duration
}

func (q Queue) max() int {
	if q.Max < 1 {
		return DefaultMaxRunning()
	}
	return q.Max
}

func (q Queue) wait() time.Duration {
	if q.Wait < 1 {
		return DefaultQueueWait
	}
	return q.Wait
}

// errBusy is returned by takeSlot when the bound passed with every slot
// held.
var errBusy = errors.New("every slot of the host was held")

// slotPoll bounds the wait between two looks at the slots: a freed slot
// is taken at most this late, while waiting costs next to no CPU.
const slotPoll = 10 * time.Millisecond

// takeSlot waits for a slot of the host's, at most wait, or until ctx
// ends. It returns the function that gives the slot back and how long
// it waited.
//
// A run that finds every slot held joins the queue: it blocks in the
// kernel on the queue file's lock, and only the holder of that lock looks
// at the slots, every slotPoll. So a hundred waiting processes cost one
// poller's CPU, not a hundred (polling them all took the CPU from the runs
// holding the slots, whose clocks were running).
func takeSlot(ctx context.Context, q Queue) (release func(), queued time.Duration, err error) {
	dir, err := slotsDir()
	if err != nil {
		return nil, 0, err
	}
	n, wait := q.max(), q.wait()
	began := time.Now()
	if f, err := tryAnySlot(dir, n); err != nil || f != nil {
		return slotRelease(f), 0, err
	}
	busy := func() error {
		return fmt.Errorf("%w for %v (%d slots in %s)", errBusy, wait.Round(time.Millisecond), n, dir)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	leave, err := joinQueue(ctx, dir, timer.C)
	if err != nil {
		if errors.Is(err, errTimedOut) {
			err = busy()
		}
		return nil, time.Since(began), err
	}
	defer leave()
	for {
		f, err := tryAnySlot(dir, n)
		if err != nil || f != nil {
			return slotRelease(f), time.Since(began), err
		}
		// Jittered, so that the poller does not look in step with the
		// runs' ends.
		pause := time.Duration(1+rand.IntN(int(slotPoll/time.Millisecond))) * time.Millisecond
		select {
		case <-ctx.Done():
			return nil, time.Since(began), ctx.Err()
		case <-timer.C:
			return nil, time.Since(began), busy()
		case <-time.After(pause):
		}
	}
}

// slotRelease is the function that gives f's slot back (nil for none).
func slotRelease(f *os.File) func() {
	if f == nil {
		return nil
	}
	return func() { f.Close() }
}

var errTimedOut = errors.New("timed out")

// joinQueue blocks until this run heads the queue of dir (it holds the
// queue file's lock), until ctx ends, or until expired fires
// (errTimedOut). It returns the function that leaves the queue. A waiter
// that gives up leaves its lock request to a goroutine that drops the lock
// as soon as the kernel grants it.
func joinQueue(ctx context.Context, dir string, expired <-chan time.Time) (leave func(), err error) {
	q, err := openSlot(filepath.Join(dir, "queue"))
	if err != nil {
		return nil, err
	}
	got := make(chan error, 1)
	go func() {
		for {
			err := unix.Flock(int(q.Fd()), unix.LOCK_EX)
			if err != unix.EINTR {
				got <- err
				return
			}
		}
	}()
	abandon := func(err error) (func(), error) {
		go func() {
			<-got
			q.Close()
		}()
		return nil, err
	}
	select {
	case err := <-got:
		if err != nil {
			q.Close()
			return nil, fmt.Errorf("waiting in the run queue of %s: %w", dir, err)
		}
		return func() { q.Close() }, nil
	case <-ctx.Done():
		return abandon(ctx.Err())
	case <-expired:
		return abandon(errTimedOut)
	}
}

// tryAnySlot tries the n slots once each, from a random one on, and
// returns the open file whose lock it got, or nil when all are held.
func tryAnySlot(dir string, n int) (*os.File, error) {
	first := rand.IntN(n)
	for i := range n {
		f, err := openSlot(filepath.Join(dir, "slot-"+strconv.Itoa((first+i)%n)))
		if err != nil {
			return nil, err
		}
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return f, nil
		}
		f.Close()
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("locking a run slot in %s: %w", dir, err)
		}
	}
	return nil, nil
}

// openSlot opens a slot file read-only, making it if it is missing,
// never through a link: another user may have made the directory's
// entries.
func openSlot(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0o444)
	if err != nil {
		return nil, fmt.Errorf("opening run slot %s: %w", path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, fmt.Errorf("opening run slot %s: not a regular file", path)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// slotsDir returns the directory of the slot files, making it (sticky and
// world-writable, as /tmp) when it is missing. A directory that is a
// link, or that others could replace entries of without the sticky bit,
// is refused.
func slotsDir() (string, error) {
	dir := os.Getenv(slotsEnv)
	if dir == "" {
		dir = defaultSlotsDir
	}
	if err := os.Mkdir(dir, 0o755); err == nil {
		// Mkdir's mode passes through the umask; the sticky bit does not.
		if err := os.Chmod(dir, os.ModePerm|os.ModeSticky); err != nil {
			return "", fmt.Errorf("opening the run slots' directory %s to every user: %w", dir, err)
		}
	} else if !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("making the run slots' directory %s: %w", dir, err)
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("run slots: %w", err)
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	switch {
	case !st.IsDir():
		return "", fmt.Errorf("run slots: %s is not a directory", dir)
	case st.Mode().Perm()&0o002 != 0 && st.Mode()&os.ModeSticky == 0:
		return "", fmt.Errorf("run slots: %s is world-writable without the sticky bit", dir)
	case sys != nil && sys.Uid != 0 && int(sys.Uid) != os.Geteuid() && st.Mode().Perm()&0o002 == 0:
		return "", fmt.Errorf("run slots: %s belongs to uid %d and is not writable by others; set %s", dir, sys.Uid, slotsEnv)
	}
	return dir, nil
}
