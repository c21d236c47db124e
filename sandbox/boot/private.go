package boot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"golang.org/x/sys/unix"

	"sandboxlab/mutants"
)

// privateTmpfs are the options of each private scratch directory: small,
// because what is written there lives in the host's memory until the run
// ends, and world-writable with the sticky bit, as /tmp is.
const privateTmpfs = "size=32m,nr_inodes=4096,mode=1777"

// makePrivate runs in the init. It covers each of dirs that exists with a
// private tmpfs (and the session's parent too when none of dirs holds it,
// so that sibling sessions are out of sight), then binds the session's
// directory back in at its path. The session is cloned before anything is
// covered: afterwards its path leads into the new, empty tmpfs.
func makePrivate(dirs []string, session string) error {
	tree := -1
	if session != "" {
		src := session
		if mutants.On(mutants.SessionParentBound) {
			// The defect: the directory the sessions live in is bound back,
			// as when a sandbox binds $TMPDIR instead of the session.
			src = filepath.Dir(session)
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			return fmt.Errorf("keeping the session directory %s: %w", src, err)
		}
		defer unix.Close(fd)
		tree = fd
		if !underAny(session, dirs) {
			dirs = append(dirs, filepath.Dir(session))
		}
	}
	// Outer directories first, so that an inner one is not mounted and
	// then covered.
	dirs = append([]string(nil), dirs...)
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) < len(dirs[j]) })
	for _, d := range dirs {
		if err := coverDir(d); err != nil {
			return err
		}
	}
	if tree < 0 {
		return nil
	}
	target := session
	if mutants.On(mutants.SessionParentBound) {
		target = filepath.Dir(session)
	}
	if err := os.MkdirAll(target, 0o755); err != nil {
		return fmt.Errorf("making the session's mount point %s: %w", target, err)
	}
	if err := unix.MoveMount(tree, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("binding the session directory back on %s: %w", target, err)
	}
	return nil
}

// coverDir mounts a private tmpfs on dir, if dir is a directory.
func coverDir(dir string) error {
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) || err == nil && !st.IsDir() {
		return nil // nothing there, or a link to a directory covered on its own
	}
	if err != nil {
		return fmt.Errorf("making %s private: %w", dir, err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, privateTmpfs); err != nil {
		return fmt.Errorf("mounting tmpfs on %s: %w", dir, err)
	}
	return nil
}

// underAny reports whether path lies in one of dirs.
func underAny(path string, dirs []string) bool {
	for _, d := range dirs {
		if Within(path, filepath.Clean(d)) {
			return true
		}
	}
	return false
}

// joinFreshKeyring gives the init, and the program it execs, a new
// anonymous session keyring: the harness's session keyring and its keys
// are no longer theirs. (A named keyring would be shared with every
// process that joins the same name.)
func joinFreshKeyring() error {
	_, _, e := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0)
	switch e {
	case 0:
		return nil
	case unix.ENOSYS:
		return nil // a kernel without keyrings has none to leak
	}
	return fmt.Errorf("joining a fresh session keyring: %w", e)
}
