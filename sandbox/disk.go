package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"sandboxlab/mutants"
)

// The disk cap inside a run (Hardened.SessionInodes, L6). A check before
// each run only refuses the next one: a single run could still fill the
// host's disk. Here the kernel refuses the write itself (ENOSPC), inside
// the run, for bytes and for files:
//
//   - the session's directory is a filesystem of its own, a tmpfs of the
//     session's quota in bytes and SessionInodes inodes, mounted on the
//     host when the session is made (owned by the program's identity,
//     mode 0700) and unmounted when it is removed. It is a directory on
//     the host like any other, so it outlives the process that made it
//     ('sandboxlab session new'), the file API reads it as before, and
//     every run binds it in with everything else below it;
//   - the private scratch directories are tmpfs mounts of privateTmpfs's
//     size and inodes, gone with the run;
//   - the allowlist root and its /dev are read-only.
//
// Why a tmpfs: it is the one filesystem with a byte and an inode limit
// that root can make in microseconds, with no image file, loop device,
// mkfs or quota feature the host's filesystem would need (project quotas
// need ext4 or XFS mounted with prjquota, which this machine's root is
// not). What it costs: the session's files live in memory (swappable,
// counted as Shmem, at most the quota; the pages a run writes are charged
// to its control group), and a kept session's files do not survive a
// reboot of the host. Mounting on the host needs root: an ordinary
// user's L6 run is refused (ErrUnavailable) rather than run with the
// check before the next run only, as every layer the machine cannot
// give is refused; setting SessionInodes to 0 keeps that check alone.

// ReasonDisk: the program failed because its disk was full: the session's
// directory reached its quota in bytes or files (as the kernel counts
// them in the session's filesystem), or a write in a private scratch
// directory found no space.
const ReasonDisk Reason = "disk"

// DefaultSessionInodes is the L6 preset's cap on the files, directories
// and links a session's directory holds.
const DefaultSessionInodes = 10000

// storeOptions are the mount options of a session's filesystem.
func storeOptions(quota int64, inodes int, id Identity) string {
	if mutants.On(mutants.SessionStoreUnbounded) {
		// The defect: a filesystem of its own, but tmpfs's default
		// limits (half the host's memory, as many inodes as pages).
		return fmt.Sprintf("mode=0700,uid=%d,gid=%d", id.UID, id.GID)
	}
	return fmt.Sprintf("size=%d,nr_inodes=%d,mode=0700,uid=%d,gid=%d", quota, inodes, id.UID, id.GID)
}

// mountSessionStore makes dir, a fresh and empty session directory, a
// filesystem of its own: a tmpfs of quota bytes and inodes inodes, owned
// by id, in the host's mount namespace. The caller must be host root; a
// dir that is already a mount point is refused. Session removal must call
// unmountSessionStore before it removes the directory.
func mountSessionStore(dir string, quota int64, inodes int, id Identity) error {
	if quota <= 0 || inodes <= 0 {
		return fmt.Errorf("mounting the session's filesystem on %s: want a quota and an inode cap, got %d bytes and %d inodes", dir, quota, inodes)
	}
	if isMountPoint(dir) {
		return fmt.Errorf("mounting the session's filesystem on %s: something is mounted there already", dir)
	}
	err := unix.Mount("sandboxlab-session", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, storeOptions(quota, inodes, id))
	if err != nil {
		if errors.Is(err, unix.EPERM) {
			// Root without CAP_SYS_ADMIN (in a container, say): the
			// layer cannot be had, and the sandbox fails closed.
			return fmt.Errorf("%w: mounting the session's filesystem on %s: %w (it needs CAP_SYS_ADMIN)", ErrUnavailable, dir, err)
		}
		return fmt.Errorf("mounting the session's filesystem on %s: %w", dir, err)
	}
	return nil
}

// unmountSessionStore undoes mountSessionStore: the files in the
// session's filesystem go with it. A dir that is no session filesystem,
// or does not exist, is left alone (nil).
func unmountSessionStore(dir string) error {
	if !isSessionStore(dir) {
		return nil
	}
	// Detached: the run's processes are gone, and a descriptor the host
	// still holds (the file API's) must not keep the directory.
	if err := unix.Unmount(dir, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); err != nil {
		return fmt.Errorf("unmounting the session's filesystem on %s: %w", dir, err)
	}
	return nil
}

// isSessionStore reports whether dir is a session's filesystem: a tmpfs
// mounted on dir itself.
func isSessionStore(dir string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		return false
	}
	return isMountPoint(dir)
}

// isMountPoint reports whether something is mounted on dir: its device
// differs from its parent's (a link is never one).
func isMountPoint(dir string) bool {
	var self, parent unix.Stat_t
	if unix.Lstat(dir, &self) != nil || self.Mode&unix.S_IFMT != unix.S_IFDIR {
		return false
	}
	if unix.Lstat(filepath.Dir(dir), &parent) != nil {
		return false
	}
	return self.Dev != parent.Dev
}

// mountStore gives the session made in dir its filesystem when the policy
// caps the disk inside a run and the caller may mount (host root). An
// ordinary user's session gets none, and its runs are refused (see
// checkSessionStore).
func (s *Session) mountStore(dir string) error {
	inodes := s.policy.Hardened.SessionInodes
	if inodes <= 0 || !HostRoot() {
		return nil
	}
	return mountSessionStore(dir, s.quota, inodes, s.id)
}

// checkSessionStore refuses a run whose policy caps the disk inside the
// run when the session's directory has no filesystem of its own: the
// caller is not root, the session was made without one ('sandboxlab
// session new' before it made one, a policy without the cap), or the host
// restarted since.
func checkSessionStore(p Policy, dir string) error {
	if p.Hardened.SessionInodes <= 0 || isSessionStore(dir) {
		return nil
	}
	why := "the session was made without one, or the host restarted since: make a new session"
	if !HostRoot() {
		why = "mounting one on the host needs root"
	}
	return fmt.Errorf("%w: the session directory %s has no filesystem of its own to cap its disk inside the run (%s; Hardened.SessionInodes 0 keeps only the check before each run)",
		ErrUnavailable, dir, why)
}

// markDisk sets the disk reason on a run that failed with its disk full,
// where the policy caps it: the session's filesystem is full by the
// kernel's count (no block or no inode free), or the program's error
// output says a write found no space (a private scratch directory, gone
// with the run, cannot be asked).
func markDisk(p Policy, dir string, res *Result) {
	if res == nil || p.Hardened.SessionInodes <= 0 || res.Reason != ReasonExited || res.ExitCode == 0 {
		return
	}
	var st unix.Statfs_t
	full := isSessionStore(dir) && unix.Statfs(dir, &st) == nil && (st.Bavail == 0 || st.Ffree == 0)
	if !full && !strings.Contains(res.Stderr, "No space left on device") {
		return
	}
	res.Reason = ReasonDisk
	if full {
		res.Message = fmt.Sprintf("the session directory is full: %s of %s used, %d of %d files",
			humanBytes(int64(st.Blocks-st.Bfree)*st.Bsize), humanBytes(int64(st.Blocks)*st.Bsize), st.Files-st.Ffree, st.Files)
	} else {
		res.Message = "a write found no space left on the device"
	}
}
