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
	"syscall"

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

	mu     sync.Mutex
	dir    string
	runs   int
	closed bool
}

// NewSession validates the policy and makes the session's directory.
func NewSession(opts Options) (*Session, error) {
	if err := opts.Policy.Validate(); err != nil {
		return nil, err
	}
	s := &Session{policy: opts.Policy, root: opts.Root, quota: opts.Quota, id: HostIdentity(), keep: opts.Keep}
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
// removes anything else.
func (s *Session) checkResumed(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("resuming session: %w", err)
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	switch {
	case !filepath.IsAbs(dir):
		return fmt.Errorf("resuming session %s: want an absolute path", dir)
	case !strings.HasPrefix(filepath.Base(dir), sessionPrefix):
		return fmt.Errorf("resuming session %s: not a session directory (its name starts with %s)", dir, sessionPrefix)
	case !st.IsDir() || st.Mode().Perm() != 0o700:
		return fmt.Errorf("resuming session %s: want a directory with mode 0700, found %v", dir, st.Mode())
	case sys == nil || int(sys.Uid) != s.id.UID:
		return fmt.Errorf("resuming session %s: not owned by uid %d", dir, s.id.UID)
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
	s.runs++
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
	res, err := run(ctx, s.policy, cmd, s.dir)
	if res != nil {
		res.Files, res.FilesTruncated = s.listed()
	}
	return res, err
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

// diskUsage adds up the blocks of everything below dir, without following links.
func diskUsage(dir string) (int64, error) {
	var used int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			used += st.Blocks * 512
		}
		return nil
	})
	return used, err
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
	if mutants.On(mutants.WorkdirKept) {
		return nil
	}
	if err := removeAll(s.dir); err != nil {
		return err
	}
	if err := os.Remove(s.dir + ownerSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the session's owner record: %w", err)
	}
	return nil
}

// removeAll removes dir even when the program left directories without
// write or search permission (root needs no help; an ordinary user does).
func removeAll(dir string) error {
	if err := removeStoreDir(dir); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(path, 0o700) // before WalkDir reads it
		}
		return nil
	})
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing session directory: %w", err)
	}
	return nil
}
