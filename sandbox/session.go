package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/mutants"
)

// DefaultQuota is the disk space a session's directory may use unless
// Options.Quota says otherwise.
const DefaultQuota = 64 << 20

// Options configure a session.
type Options struct {
	// Policy applies to every run of the session.
	Policy Policy
	// Root is where the session's directory is made (default
	// os.TempDir()). The program's host identity must be able to reach it.
	Root string
	// Quota is the disk space, in bytes, the session's directory may use
	// before the next run is refused. Zero means DefaultQuota; negative
	// means no quota.
	Quota int64
	// Dir resumes a session whose directory an earlier process made (see
	// 'sandboxlab session new') instead of making a new one. It must be a
	// session directory: named sandboxlab-session-*, mode 0700, owned by
	// the program's identity.
	Dir string
	// Keep makes a session that outlives this process ('sandboxlab session
	// new'): the janitor (CollectGarbage) never removes it; Close does.
	// Otherwise the session belongs to this process, and once the process
	// is gone without closing it, the next one to make a session in the
	// same Root removes it.
	Keep bool
	// Prestart prepares each run's successor while the session waits (see
	// warm.go): after a run, the next run of the same program in the same
	// directory finds its namespaces, control group, init and layers made,
	// and starts in a fraction of the time. Any other run discards it and
	// starts cold. It has no effect while a planted defect is on, or
	// without namespaces (L0, L1).
	Prestart bool
	// Queue is how the session's runs use the host's slots (see
	// slots.go); the zero Queue is the default.
	Queue Queue
	// Observe, when set, is given the Result of each of the session's
	// runs that reached the host's queue, as Run returns it: a harness
	// that runs many sessions for one verdict gathers their timeouts this
	// way.
	Observe func(*Result)
}

// Session is one conversation's sandbox: a private directory that lives
// across its runs, a run count and a disk quota. Runs of one session are
// sequential. Close removes the directory.
type Session struct {
	policy Policy
	root   string
	quota  int64
	id     Identity
	keep   bool
	queue  Queue
	// observe is Options.Observe.
	observe func(*Result)

	mu     sync.Mutex
	dir    string
	runs   int
	closed bool
	// prestart is Options.Prestart; next is the init being prepared or
	// waiting for the next run (nil: none).
	prestart bool
	next     *warming
	// settling waits for the init of the last run, when its Result came
	// before the init had exited (see settleEarly); nil otherwise.
	// unsettled is the first error of a settling, which Close returns.
	settling  func() error
	unsettled error
}

// warming is a pre-started init on its way: w is set (nil if it could
// not be made, or was called off) when ready is closed. Closing off, before
// the init's making has begun (prestartDelay), calls it off.
type warming struct {
	key   string
	ready chan struct{}
	off   chan struct{}
	w     *warmInit
}

// NewSession validates the policy and makes the session's directory.
func NewSession(opts Options) (*Session, error) {
	if err := opts.Policy.Validate(); err != nil {
		return nil, err
	}
	s := &Session{policy: opts.Policy, root: opts.Root, quota: opts.Quota, id: HostIdentity(), keep: opts.Keep,
		prestart: opts.Prestart, queue: opts.Queue, observe: opts.Observe}
	if s.root == "" {
		s.root = os.TempDir()
	}
	if s.quota == 0 {
		s.quota = DefaultQuota
	}
	if opts.Dir != "" {
		if err := s.checkResumed(opts.Dir); err != nil {
			return nil, err
		}
		s.dir = opts.Dir
		return s, nil
	}
	collectOnce(s.root)
	dir, err := s.makeDir()
	if err != nil {
		return nil, err
	}
	s.dir = dir
	return s, nil
}

// sessionPrefix starts the name of every session directory.
const sessionPrefix = "sandboxlab-session-"

// checkResumed makes sure dir is a session directory, so that Close never
// removes anything else: an absolute path, named like a session, a
// directory and not a link, owned by the program's identity. Its mode is
// not checked but put back to 0700: the program owns its directory and
// may have changed it, which must not lock the session out.
func (s *Session) checkResumed(dir string) error {
	switch {
	case !filepath.IsAbs(dir):
		return fmt.Errorf("resuming session %s: want an absolute path", dir)
	case !strings.HasPrefix(filepath.Base(dir), sessionPrefix):
		return fmt.Errorf("resuming session %s: not a session directory (its name starts with %s)", dir, sessionPrefix)
	}
	if err := repairDir(dir, s.id.UID); err != nil {
		return fmt.Errorf("resuming session %s: %w", dir, err)
	}
	return nil
}

// repairDir gives the session directory dir its mode 0700 back, once it
// has checked, on the one handle it changes, that dir is a directory (not
// a link) owned by uid.
func repairDir(dir string, uid int) error {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: dir, Err: err}
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return fmt.Errorf("want a directory, found a %s", typeName(st.Mode))
	case int(st.Uid) != uid:
		return fmt.Errorf("not owned by uid %d", uid)
	case st.Mode&0o7777 == 0o700:
		return nil
	}
	if err := chmodFD(fd, 0o700); err != nil {
		return fmt.Errorf("giving it back mode 0700 (it has %#o): %w", st.Mode&0o7777, err)
	}
	return nil
}

// makeDir makes a fresh 0700 directory owned by the program's identity.
func (s *Session) makeDir() (string, error) {
	dir, err := os.MkdirTemp(s.root, sessionPrefix)
	if err != nil {
		return "", fmt.Errorf("making session directory: %w", err)
	}
	if err := os.Chown(dir, s.id.UID, s.id.GID); err != nil {
		os.Remove(dir)
		return "", fmt.Errorf("handing session directory %s to uid %d: %w", dir, s.id.UID, err)
	}
	if err := writeOwner(dir, s.keep); err != nil {
		os.Remove(dir)
		return "", err
	}
	if err := s.mountStore(dir); err != nil {
		os.Remove(dir + ownerSuffix)
		os.Remove(dir)
		return "", err
	}
	return dir, nil
}

// Dir returns the session's directory.
func (s *Session) Dir() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dir
}

// Policy returns the policy every run of the session gets.
func (s *Session) Policy() Policy { return s.policy }

// Runs returns how many runs the session has had, refused ones included.
func (s *Session) Runs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs
}

// Quota returns the session's disk quota in bytes (negative: none).
func (s *Session) Quota() int64 { return s.quota }

// Run runs one program in the session. The error is non-nil only when the
// run could not take place as the policy asks (ErrUnavailable, an invalid
// command, a closed session) or ctx was cancelled; a refused, stopped or
// failing program is described by the Result.
func (s *Session) Run(ctx context.Context, cmd Command) (*Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	s.settle()
	s.runs++
	if err := repairDir(s.dir, s.id.UID); err != nil {
		return nil, fmt.Errorf("session directory %s: %w", s.dir, err)
	}
	if mutants.On(mutants.FreshDirPerRun) {
		dir, err := s.makeDir()
		if err != nil {
			return nil, err
		}
		s.dir = dir
	}
	if msg := s.overQuota(); msg != "" {
		res := &Result{Level: s.policy.Level, Reason: ReasonRefused, Message: msg, ExitCode: -1}
		res.Files, res.FilesTruncated = s.listed()
		return res, nil
	}
	res, settling, err := run(ctx, s.policy, s.queue, cmd, s.dir, s.takeNext(cmd))
	s.settling = settling
	if res != nil {
		res.Files, res.FilesTruncated = s.listed()
		if s.observe != nil {
			s.observe(res)
		}
	}
	if s.prestart && err == nil && canPrestart(s.policy) {
		s.prepareNext(cmd)
	}
	return res, err
}

// settle waits until the last run's init has exited and been reaped,
// if its Result came before (see settleEarly): a run is not over for
// the session until then, nor is the session closed.
func (s *Session) settle() {
	if s.settling != nil {
		if err := s.settling(); err != nil && s.unsettled == nil {
			s.unsettled = err
		}
		s.settling = nil
	}
}

// takeNext returns the pre-started init for cmd, once it is ready, or
// nil (discarding one made for another command) when cmd must start
// cold.
func (s *Session) takeNext(cmd Command) *warmInit {
	next := s.next
	if next == nil {
		return nil
	}
	if next.key != warmKey(cmd) {
		s.discardNext()
		return nil
	}
	s.next = nil
	<-next.ready
	return next.w
}

// discardNext ends the pre-started init, if any, or calls off its making.
func (s *Session) discardNext() {
	if next := s.next; next != nil {
		s.next = nil
		close(next.off)
		<-next.ready
		next.w.discard()
	}
}

// Prepare starts, in the background, the init of a next run of cmd (its
// Path and Dir: the arguments and environment come with the run), as
// Options.Prestart does after each run: a session that knows what it will
// run first need not wait for a run to have a warm start. It does nothing
// where a run could not use it (see Options.Prestart), and discards an
// init prepared for another command.
func (s *Session) Prepare(cmd Command) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || !canPrestart(s.policy) || (s.next != nil && s.next.key == warmKey(cmd)) {
		return
	}
	s.discardNext()
	s.prepareNext(cmd)
}

// prestartDelay is how long after a run its successor's init begins: the
// caller's own reply to its caller (an MCP response) goes out first.
// Making an init takes tens of ms of CPU, and on a machine with two cores
// it slowed that reply by several ms when it began at once.
const prestartDelay = 10 * time.Millisecond

// prepareNext starts the init for a next run of cmd, in the background.
func (s *Session) prepareNext(cmd Command) {
	next := &warming{key: warmKey(cmd), ready: make(chan struct{}), off: make(chan struct{})}
	s.next = next
	policy, dir := s.policy, s.dir
	go func() {
		select {
		case <-time.After(prestartDelay):
		case <-next.off:
			close(next.ready)
			return // a run of another program, Prepare or Close came first
		}
		next.w, _ = prestart(policy, cmd, dir) // nil: the next run starts cold, and meets the reason itself
		close(next.ready)
		if next.w != nil {
			// The init's fork left this process's pages to fault, one by
			// one, in the next call; they fault now, while it waits.
			breakCopyOnWrite()
		}
	}()
}

// overQuota returns why the next run is refused, or "".
// The defect's site is asked only when the quota would refuse the run.
func (s *Session) overQuota() string {
	if s.quota < 0 {
		return ""
	}
	used, err := diskUsage(s.dir)
	switch {
	case err != nil && !mutants.On(mutants.QuotaIgnored):
		return fmt.Sprintf("the session's disk use cannot be measured (%v); delete what the program left behind and run again", err)
	case err == nil && used > s.quota && !mutants.On(mutants.QuotaIgnored):
		return fmt.Sprintf("the session directory uses %s, over its quota of %s: delete files before running again", humanBytes(used), humanBytes(s.quota))
	}
	return ""
}

// diskUsage adds up the blocks of dir and everything below it, without
// following links or crossing mount points, a file with several links
// once. Depth does not defeat it (see dirStack). A directory the
// program's identity owns but cannot read (as an ordinary user) is read
// for a moment and given its mode back, so that a mode cannot hide what
// is inside from the quota.
func diskUsage(dir string) (int64, error) {
	if isSessionStore(dir) {
		// The session's own filesystem (L6) counts its blocks itself.
		var st unix.Statfs_t
		if err := unix.Statfs(dir, &st); err != nil {
			return 0, fmt.Errorf("measuring %s: %w", dir, err)
		}
		return int64(st.Blocks-st.Bfree) * st.Bsize, nil
	}
	base, err := unix.Open(filepath.Dir(dir), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("opening %s: %w", filepath.Dir(dir), err)
	}
	defer unix.Close(base)
	s := newDirStack(base, dir)
	top, err := openChild(base, filepath.Base(dir), 0o500)
	if err != nil {
		return 0, fmt.Errorf("opening %s: %w", dir, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(top.fd, &st); err != nil {
		return 0, fmt.Errorf("measuring %s: %w", dir, err)
	}
	s.push(top)
	m := &measure{s: s, used: st.Blocks * 512, seen: map[[2]uint64]bool{}}
	err = m.walk()
	if uerr := m.unwind(); err == nil {
		err = uerr
	}
	return m.used, err
}

// measure is one diskUsage walk.
type measure struct {
	s    *dirStack
	used int64
	seen map[[2]uint64]bool // files with several links, counted once
}

// walk adds up everything below the top, leaving each directory with its
// mode as found.
func (m *measure) walk() error {
	for len(m.s.frames) > 0 {
		f := m.s.last()
		e, ok, err := m.s.next(f)
		if err != nil {
			return err
		}
		if !ok {
			if len(m.s.frames) == 1 {
				return nil // unwind gives the top its mode back
			}
			if err := m.up(); err != nil {
				return err
			}
			continue
		}
		var st unix.Stat_t
		err = unix.Fstatat(f.fd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT)
		switch {
		case errors.Is(err, unix.ENOENT):
			continue
		case err != nil:
			return fmt.Errorf("%s: %w", m.s.path(len(m.s.frames)-1, e.name), err)
		}
		if st.Nlink > 1 && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			if m.seen[[2]uint64{st.Dev, st.Ino}] {
				continue
			}
			m.seen[[2]uint64{st.Dev, st.Ino}] = true
		}
		m.used += st.Blocks * 512
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		child, err := openChild(f.fd, e.name, 0o500)
		switch {
		case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.ELOOP):
		case err != nil:
			return fmt.Errorf("%s: %w", m.s.path(len(m.s.frames)-1, e.name), err)
		default:
			f.pending = nil // read on from e when back: bounded memory at any depth
			m.s.push(child)
		}
	}
	return nil
}

// up leaves the deepest directory, giving it back the mode it had.
func (m *measure) up() error {
	if _, err := m.s.parentFD(); err != nil {
		return err
	}
	f := m.s.last()
	if f.granted {
		if err := unix.Fchmod(f.fd, f.mode); err != nil {
			return fmt.Errorf("giving %s its mode back: %w", m.s.path(len(m.s.frames)-1, ""), err)
		}
	}
	m.s.drop()
	return nil
}

// unwind leaves every directory still on the way down (all of them after
// an error) with its mode as found.
func (m *measure) unwind() error {
	defer m.s.closeAll()
	for len(m.s.frames) > 0 {
		if err := m.up(); err != nil {
			return err
		}
	}
	return nil
}

// humanBytes writes n in KiB or MiB.
func humanBytes(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// Close ends the session and removes its directory with everything the
// program left in it, whatever its permissions.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.settle()
	s.discardNext()
	if mutants.On(mutants.WorkdirKept) {
		return nil
	}
	if err := removeTree(s.dir); err != nil {
		return err
	}
	if err := os.Remove(s.dir + ownerSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the session's owner record: %w", err)
	}
	return s.unsettled
}
