package boot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// The allowlist root (Filesystem.Expose, L6): the program's / is a fresh,
// read-only tmpfs that holds only what it needs to run, bound read-only
// from the host; the session directory and the private scratch
// directories are its only writable places. Nothing else of the host
// exists in it: no /var, /srv, /opt, /mnt, /home, /root or host /run, so
// a host service's socket or a user's file outside the session is not
// hidden from the program but absent, and Landlock's rules apply to the
// paths of this root. The init builds it in its own mount namespace and
// pivots into it; the old root is unmounted, not merely covered.

// rootDevices are the character devices of the root's /dev, bound from
// the host's (a user namespace cannot make device nodes).
var rootDevices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// rootDevLinks are the links of the root's /dev.
var rootDevLinks = [][2]string{
	{"fd", "/proc/self/fd"}, {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"},
}

// Sizes of the root's own tmpfs mounts: they hold directories, links and
// mount points only, and are read-only once built.
const (
	rootTmpfs = "size=64k,nr_inodes=1024,mode=0755"
	devTmpfs  = "size=64k,nr_inodes=256,mode=0755"
)

// rootStaging is where the init mounts the new root before it pivots:
// any directory of the old root serves, since the old root is unmounted
// afterwards. Every source is cloned before it is covered.
const rootStaging = "/tmp"

// RootSpec is what the init needs to build the root (see
// Filesystem.Expose). Its fields travel in the init's config, which
// carries exported fields only.
type RootSpec struct {
	// Expose lists the host paths bound read-only (links made again).
	Expose []string
	// Private lists the scratch directories, each a private tmpfs.
	Private []string
	// Session is the session's directory, bound read-write at SessionAt,
	// or at its own path when SessionAt is "".
	Session   string
	SessionAt string
	// Program is the program's path, bound read-only when no exposed
	// path or the session holds it.
	Program string
	// Hide lists paths covered inside the new root (Filesystem.Hide).
	Hide []string
}

// enterRoot is the init's step: build the root and pivot into it.
func enterRoot(cfg *Config) error {
	if cfg.Root == nil {
		return nil
	}
	return cfg.Root.enter()
}

// bindSource is one host path to bind into the root, cloned from the old
// root before anything covers it.
type bindSource struct {
	path     string // on the host
	at       string // in the new root ("": path)
	fd       int
	readOnly bool
	dir      bool
}

// enter builds the root at rootStaging and pivots into it, then covers
// the hidden paths and returns to the working directory, which must
// exist in the new root.
func (r *RootSpec) enter() error {
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("reading the working directory: %w", err)
	}
	links, binds, err := r.sources(cwd)
	defer func() {
		for _, b := range binds {
			unix.Close(b.fd)
		}
	}()
	if err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", rootStaging, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, rootTmpfs); err != nil {
		return fmt.Errorf("mounting the new root's tmpfs on %s: %w", rootStaging, err)
	}
	if err := r.populate(links, binds); err != nil {
		return err
	}
	if err := pivot(rootStaging); err != nil {
		return err
	}
	for _, h := range r.Hide {
		if err := hide(h); err != nil {
			return err
		}
	}
	cwd = r.Inside(cwd)
	if err := unix.Chdir(cwd); err != nil {
		return fmt.Errorf("entering the working directory %s in the new root: %w", cwd, err)
	}
	return nil
}

// sources reads what the root takes from the host: the exposed links as
// they are, and a clone of every exposed file or directory, device,
// /proc, the session, and the program and working directory when nothing
// else brings them in.
func (r *RootSpec) sources(cwd string) (map[string]string, []bindSource, error) {
	links := map[string]string{}
	var binds []bindSource
	add := func(path string, readOnly bool) error {
		b, err := cloneSource(path, readOnly)
		if err == nil {
			binds = append(binds, b)
		}
		return err
	}
	for _, p := range r.Expose {
		st, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, binds, fmt.Errorf("exposing %s: %w", p, err)
		case st.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return nil, binds, fmt.Errorf("exposing %s: %w", p, err)
			}
			links[p] = target
			continue
		}
		if err := add(p, true); err != nil {
			return nil, binds, err
		}
	}
	for _, d := range rootDevices {
		if err := add("/dev/"+d, false); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, binds, err
		}
	}
	if err := add("/proc", false); err != nil {
		return nil, binds, err
	}
	if r.Session != "" {
		if err := add(r.Session, false); err != nil {
			return nil, binds, err
		}
		binds[len(binds)-1].at = r.SessionAt
	}
	if r.Program != "" && !r.holds(r.Program) {
		// A program that is not there is the exec's to report (not_found,
		// 127), as at every other level, not a failure of the root.
		if err := add(r.Program, true); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, binds, err
		}
	}
	if !r.holds(cwd) {
		if err := add(cwd, false); err != nil {
			return nil, binds, err
		}
	}
	return links, binds, nil
}

// Inside is the host path as the program sees it in the new root: a path
// in the session moves with it to SessionAt; any other stays as it is.
func (r *RootSpec) Inside(path string) string {
	return InsideSession(path, r.Session, r.SessionAt)
}

// InsideSession is path as a program sees it whose session directory,
// session on the host, is bound at at ("": at its own path).
func InsideSession(path, session, at string) string {
	if at == "" || session == "" || !Within(path, session) {
		return path
	}
	rel, err := filepath.Rel(session, path)
	if err != nil {
		return path
	}
	return filepath.Join(at, rel)
}

// target is where b goes in the new root.
func (b bindSource) target() string {
	if b.at != "" {
		return b.at
	}
	return b.path
}

// holds reports whether path is in the root without a bind of its own:
// below an exposed directory or the session.
func (r *RootSpec) holds(path string) bool {
	if r.Session != "" && Within(path, r.Session) {
		return true
	}
	for _, p := range r.Expose {
		if Within(path, p) {
			if st, err := os.Lstat(p); err == nil && st.IsDir() {
				return true
			}
		}
	}
	return false
}

// cloneSource clones the mount tree at path (with what is mounted below
// it), read-only when asked: the flag is set on the detached copy, so
// none of the source's locked flags needs repeating.
func cloneSource(path string, readOnly bool) (bindSource, error) {
	st, err := os.Stat(path)
	if err != nil {
		return bindSource{}, fmt.Errorf("binding %s into the new root: %w", path, err)
	}
	fd, err := unix.OpenTree(unix.AT_FDCWD, path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return bindSource{}, fmt.Errorf("cloning %s for the new root: %w", path, err)
	}
	b := bindSource{path: path, fd: fd, readOnly: readOnly, dir: st.IsDir()}
	if readOnly {
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
			unix.Close(fd)
			return bindSource{}, fmt.Errorf("making %s read-only for the new root: %w", path, err)
		}
	}
	return b, nil
}

// populate fills the new root at rootStaging: the links, the binds
// (outer paths first, so that an inner one is not covered), a /dev of
// its own, the private scratch directories; then /dev and the root
// itself become read-only.
func (r *RootSpec) populate(links map[string]string, binds []bindSource) error {
	for p, target := range links {
		at := rootStaging + p
		if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
			return fmt.Errorf("making the new root's %s: %w", filepath.Dir(p), err)
		}
		if err := os.Symlink(target, at); err != nil {
			return fmt.Errorf("linking the new root's %s to %s: %w", p, target, err)
		}
	}
	if err := mountDev(); err != nil {
		return err
	}
	sort.SliceStable(binds, func(i, j int) bool { return len(binds[i].target()) < len(binds[j].target()) })
	private := slices.Clone(r.Private)
	sort.Strings(private)
	// The binds that private directories hold (the program, the working
	// directory below /tmp) go after those directories are mounted.
	var inPrivate []bindSource
	for _, b := range binds {
		if underAny(b.target(), private) {
			inPrivate = append(inPrivate, b)
			continue
		}
		if err := attach(b); err != nil {
			return err
		}
	}
	for _, d := range private {
		if err := mountPrivate(rootStaging + d); err != nil {
			return err
		}
	}
	for _, b := range inPrivate {
		if err := attach(b); err != nil {
			return err
		}
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, rootStaging+"/dev", 0, &attr); err != nil {
		return fmt.Errorf("making the new root's /dev read-only: %w", err)
	}
	return nil
}

// mountDev gives the new root a /dev of its own: a small tmpfs with
// mount points for the devices, the usual links, and directories for
// /dev/shm and /dev/mqueue (private directories at L5 and L6). No
// pseudo-terminals: a run has none to talk to.
func mountDev() error {
	dev := rootStaging + "/dev"
	if err := os.Mkdir(dev, 0o755); err != nil {
		return fmt.Errorf("making the new root's /dev: %w", err)
	}
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, devTmpfs); err != nil {
		return fmt.Errorf("mounting tmpfs on the new root's /dev: %w", err)
	}
	for _, l := range rootDevLinks {
		if err := os.Symlink(l[1], dev+"/"+l[0]); err != nil {
			return fmt.Errorf("linking the new root's /dev/%s: %w", l[0], err)
		}
	}
	for _, d := range []string{"shm", "mqueue"} {
		if err := os.Mkdir(dev+"/"+d, 0o755); err != nil {
			return fmt.Errorf("making the new root's /dev/%s: %w", d, err)
		}
	}
	return nil
}

// mountPrivate mounts a private scratch tmpfs on dir of the new root.
func mountPrivate(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("making the new root's %s: %w", strings.TrimPrefix(dir, rootStaging), err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, privateTmpfs); err != nil {
		return fmt.Errorf("mounting tmpfs on the new root's %s: %w", strings.TrimPrefix(dir, rootStaging), err)
	}
	return nil
}

// attach moves the clone b to its path in the new root, making the mount
// point first.
func attach(b bindSource) error {
	at := rootStaging + b.target()
	if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
		return fmt.Errorf("making the new root's %s: %w", filepath.Dir(b.target()), err)
	}
	var err error
	if b.dir {
		err = os.Mkdir(at, 0o755)
	} else {
		var f *os.File
		if f, err = os.OpenFile(at, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
			f.Close()
		}
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("making the new root's mount point %s: %w", b.target(), err)
	}
	return moveClone(b, at)
}

// moveClone mounts the clone b at at. A file the host replaced since it
// was cloned (useradd renames a new /etc/group into place) is cloned
// again: the clone's root is then a deleted file, which the kernel will
// not mount (ENOENT), and a user added on the host must not fail a run.
// The caller closes b's own descriptor; a fresh clone's is closed here.
func moveClone(b bindSource, at string) error {
	fd := b.fd
	for try := 1; ; try++ {
		err := unix.MoveMount(fd, "", unix.AT_FDCWD, at, unix.MOVE_MOUNT_F_EMPTY_PATH)
		if fd != b.fd {
			unix.Close(fd)
		}
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.ENOENT) || b.dir || try == cloneTries {
			return fmt.Errorf("binding %s into the new root: %w", b.path, err)
		}
		again, cerr := cloneSource(b.path, b.readOnly)
		if cerr != nil {
			return cerr
		}
		fd = again.fd
	}
}

// cloneTries bounds moveClone's clones of one file: a host file replaced
// again at every try is being rewritten without pause.
const cloneTries = 3

// pivot makes newRoot the root and unmounts the old one (runc's
// pivot_root(".", "."): no directory is needed for the old root, which
// is stacked on the new one until it is unmounted), then makes the new
// root's own tmpfs read-only.
func pivot(newRoot string) error {
	oldRoot, err := unix.Open("/", unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening the old root: %w", err)
	}
	defer unix.Close(oldRoot)
	if err := unix.Chdir(newRoot); err != nil {
		return fmt.Errorf("entering the new root: %w", err)
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivoting into the new root: %w", err)
	}
	if err := unix.Fchdir(oldRoot); err != nil {
		return fmt.Errorf("returning to the old root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("unmounting the old root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("entering the new root: %w", err)
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", 0, &attr); err != nil {
		return fmt.Errorf("making the new root read-only: %w", err)
	}
	return nil
}

// Within reports whether path is dir or lies below it (both absolute).
func Within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
