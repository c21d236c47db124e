package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// removeTree removes the directory dir and everything in it, whatever the
// program left there: any modes (000, sticky, the directory's own), any
// depth (descriptors stay bounded, PATH_MAX does not apply), FIFOs,
// sockets, names that are not UTF-8, hard links (only the link goes).
// It never follows a symbolic link (the link goes, not its target) and
// never crosses a mount point: a mount inside is left with what leads to
// it, and the error names it. What it cannot remove it leaves, and goes on
// with the rest; the error names the first failure and how many there
// were. A dir that does not exist is no error.
//
// A file flagged immutable or append-only (chattr +i, +a) cannot be
// removed by anyone until the flag is cleared. The program cannot set
// those flags: that needs CAP_LINUX_IMMUTABLE in the host's user
// namespace, which it never holds. removeTree leaves such a file and says
// so, since only the host's administrator can have put it there.
func removeTree(dir string) error {
	// A session's own filesystem (the disk cap at L6) goes with its files;
	// what is left is the empty directory it was mounted on.
	if err := unmountSessionStore(dir); err != nil {
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	base, err := unix.Open(filepath.Dir(dir), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return fmt.Errorf("removing %s: opening its parent: %w", dir, err)
	}
	defer unix.Close(base)
	r := &remover{s: newDirStack(base, dir)}
	defer r.s.closeAll()
	top, err := openChild(base, filepath.Base(dir), 0o700)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR):
		return fmt.Errorf("removing %s: not a directory (a symbolic link?): left in place", dir)
	case err != nil:
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	r.s.push(top)
	for len(r.s.frames) > 0 {
		f := r.s.last()
		e, ok, err := r.s.next(f)
		switch {
		case err != nil:
			return fmt.Errorf("removing %s: %w", dir, err)
		case ok:
			r.entry(f, e)
		case f.removed: // read it again: was anything missed?
			f.removed, f.pos = false, 0
		default:
			if err := r.leave(); err != nil {
				return fmt.Errorf("removing %s: %w", dir, err)
			}
		}
	}
	if len(r.errs) > 0 {
		return fmt.Errorf("removing %s: %d entries left: %w", dir, r.failures, r.named())
	}
	return nil
}

// remover is one removal's state.
type remover struct {
	s        *dirStack
	errs     []error // the first maxNamed failures
	failures int
}

// maxNamed bounds the failures a removal's error names.
const maxNamed = 3

// named joins the failures named, on one line.
func (r *remover) named() error {
	format := strings.TrimSuffix(strings.Repeat("%w; ", len(r.errs)), "; ")
	if r.failures > len(r.errs) {
		format += "; …"
	}
	args := make([]any, len(r.errs))
	for i, e := range r.errs {
		args[i] = e
	}
	return fmt.Errorf(format, args...)
}

// fail records that name in frames[i] could not be removed.
func (r *remover) fail(f *walkFrame, name string, err error) {
	if f.failed == nil {
		f.failed = map[string]bool{}
	}
	f.failed[name] = true
	r.failures++
	if len(r.errs) < maxNamed {
		r.errs = append(r.errs, fmt.Errorf("%s: %w", r.s.path(len(r.s.frames)-1, name), err))
	}
}

// entry removes e of f, the deepest directory: a file, link, FIFO or
// socket at once, a directory by going down into it.
func (r *remover) entry(f *walkFrame, e dirent) {
	if f.failed[e.name] {
		return
	}
	if e.typ != unix.DT_DIR {
		err := unix.Unlinkat(f.fd, e.name, 0)
		switch {
		case err == nil:
			f.removed = true
			return
		case errors.Is(err, unix.ENOENT):
			return
		case !errors.Is(err, unix.EISDIR):
			r.fail(f, e.name, explainUnlink(f.fd, e.name, err))
			return
		}
	}
	child, err := openChild(f.fd, e.name, 0o700)
	switch {
	case errors.Is(err, unix.ENOENT):
	case errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.ELOOP):
		// Not a directory after all (its type was unknown or changed).
		e.typ = unix.DT_UNKNOWN
		if err := unix.Unlinkat(f.fd, e.name, 0); err == nil {
			f.removed = true
		} else if !errors.Is(err, unix.ENOENT) {
			r.fail(f, e.name, explainUnlink(f.fd, e.name, err))
		}
	case err != nil:
		r.fail(f, e.name, err)
	default:
		f.pending = nil // read on from e when back: bounded memory at any depth
		r.s.push(child)
	}
}

// leave removes the deepest directory, now empty (or holding only what
// could not be removed), and goes back up to its parent.
func (r *remover) leave() error {
	parent, err := r.s.parentFD()
	if err != nil {
		return err
	}
	f := r.s.drop()
	err = unix.Unlinkat(parent, f.name, unix.AT_REMOVEDIR)
	if len(r.s.frames) == 0 {
		if err != nil && !errors.Is(err, unix.ENOENT) && len(r.errs) == 0 {
			r.errs, r.failures = []error{explainUnlink(parent, f.name, err)}, 1
		}
		return nil
	}
	p := r.s.last()
	switch {
	case err == nil:
		p.removed = true
	case errors.Is(err, unix.ENOENT):
	case errors.Is(err, unix.ENOTEMPTY) && len(f.failed) > 0:
		// What is left below was named already.
		if p.failed == nil {
			p.failed = map[string]bool{}
		}
		p.failed[f.name] = true
	default:
		r.fail(p, f.name, explainUnlink(parent, f.name, err))
	}
	return nil
}

// explainUnlink adds why an entry could not be removed, where the kernel's
// word alone would puzzle: an immutable or append-only flag on it or on
// its directory, or a mount on it.
func explainUnlink(dirfd int, name string, err error) error {
	switch {
	case errors.Is(err, unix.EBUSY):
		return fmt.Errorf("%w (a mount point: not removed)", err)
	case !errors.Is(err, unix.EPERM):
		return err
	}
	var stx unix.Statx_t
	if unix.Statx(dirfd, name, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, 0, &stx) == nil && flaggedImmutable(stx) {
		return fmt.Errorf("%w: %w", err, errImmutable)
	}
	if unix.Statx(dirfd, "", unix.AT_EMPTY_PATH, 0, &stx) == nil && flaggedImmutable(stx) {
		return fmt.Errorf("%w: its directory is flagged: %w", err, errImmutable)
	}
	return err
}

// errImmutable explains an immutable or append-only flag.
var errImmutable = errors.New("flagged immutable or append-only (chattr +i/+a); the program cannot set that " +
	"(it needs CAP_LINUX_IMMUTABLE, which the program never holds), so the host's administrator did: " +
	"clear it with chattr -i -a and remove again")

func flaggedImmutable(stx unix.Statx_t) bool {
	const flags = unix.STATX_ATTR_IMMUTABLE | unix.STATX_ATTR_APPEND
	return stx.Attributes_mask&flags != 0 && stx.Attributes&flags != 0
}
