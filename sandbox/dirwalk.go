package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// The host removes and measures a session's directory, whatever the
// program did to its tree, by walking it descriptor by descriptor:
//
//   - every directory is opened relative to its parent with openat2,
//     never through a symbolic link (RESOLVE_NO_SYMLINKS, O_NOFOLLOW) and
//     never across a mount point (RESOLVE_NO_XDEV); names are never joined
//     into paths, so neither depth nor PATH_MAX limits the walk, and names
//     are bytes, UTF-8 or not;
//   - at most walkFDs directory descriptors are open, whatever the depth:
//     past that the oldest ancestors are closed, and re-opened on the way
//     back up through "..", which must be the same directory (device and
//     inode) as before, or the walk stops;
//   - a directory the walker's identity owns but cannot read or search
//     (mode 000, say) is given the permission it needs first. Root needs
//     none of that; an ordinary user, whose program's files are its own,
//     does.

// walkFDs bounds the directory descriptors a walk holds open.
const walkFDs = 16

// dirent is one entry of a directory as getdents64 gives it.
type dirent struct {
	name string
	typ  uint8
	off  int64 // the directory offset just past this entry
}

// walkFrame is one directory on the way down.
type walkFrame struct {
	name     string // in its parent
	dev, ino uint64
	fd       int             // -1 while closed to stay within walkFDs
	pos      int64           // where the next read of the directory starts
	mode     uint32          // the permission bits found, before any grant
	granted  bool            // the walk changed the mode to get in
	removed  bool            // removal: something went in this pass
	failed   map[string]bool // removal: names that could not be removed
	pending  []dirent
}

// dirStack is the walk's way down from base, the directory holding the
// walk's top, which stays open for the whole walk.
type dirStack struct {
	base   int
	top    string // the top's path, for messages
	frames []*walkFrame
	low    int // frames[low:] are open
	buf    []byte
}

func newDirStack(base int, top string) *dirStack {
	return &dirStack{base: base, top: top, buf: make([]byte, 8<<10)}
}

// push makes f the deepest directory, closing the oldest open ancestor
// when more than walkFDs would be open.
func (s *dirStack) push(f *walkFrame) {
	s.frames = append(s.frames, f)
	if len(s.frames)-s.low > walkFDs {
		unix.Close(s.frames[s.low].fd)
		s.frames[s.low].fd = -1
		s.low++
	}
}

// last is the deepest directory.
func (s *dirStack) last() *walkFrame { return s.frames[len(s.frames)-1] }

// parentFD returns a descriptor of the deepest directory's parent,
// re-opening it through ".." when it was closed.
func (s *dirStack) parentFD() (int, error) {
	i := len(s.frames) - 1
	if i == 0 {
		return s.base, nil
	}
	p := s.frames[i-1]
	if p.fd >= 0 {
		return p.fd, nil
	}
	fd, err := unix.Openat2(s.frames[i].fd, "..", &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV,
	})
	if err != nil {
		return -1, fmt.Errorf("re-opening %s: %w", s.path(i-1, ""), err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Dev != p.dev || st.Ino != p.ino {
		unix.Close(fd)
		return -1, fmt.Errorf("re-opening %s: the tree moved while it was walked", s.path(i-1, ""))
	}
	p.fd = fd
	s.low = i - 1
	return fd, nil
}

// drop closes the deepest directory and leaves it. Its parent must be
// open (parentFD).
func (s *dirStack) drop() *walkFrame {
	f := s.last()
	unix.Close(f.fd)
	f.fd = -1
	s.frames = s.frames[:len(s.frames)-1]
	if s.low > len(s.frames)-1 && len(s.frames) > 0 {
		s.low = len(s.frames) - 1
	}
	return f
}

// closeAll closes every descriptor the walk holds but base.
func (s *dirStack) closeAll() {
	for _, f := range s.frames {
		if f.fd >= 0 {
			unix.Close(f.fd)
			f.fd = -1
		}
	}
	s.frames = nil
	s.low = 0
}

// next returns the next entry of f, the deepest directory, reading on
// from f.pos ("." and ".." left out); false at its end.
func (s *dirStack) next(f *walkFrame) (dirent, bool, error) {
	for {
		for len(f.pending) > 0 {
			e := f.pending[0]
			f.pending = f.pending[1:]
			f.pos = e.off
			if e.name != "." && e.name != ".." {
				return e, true, nil
			}
		}
		if _, err := unix.Seek(f.fd, f.pos, 0); err != nil {
			return dirent{}, false, fmt.Errorf("reading %s: %w", s.path(len(s.frames)-1, ""), err)
		}
		n, err := unix.Getdents(f.fd, s.buf)
		for err == unix.EINTR {
			n, err = unix.Getdents(f.fd, s.buf)
		}
		if err != nil {
			return dirent{}, false, fmt.Errorf("reading %s: %w", s.path(len(s.frames)-1, ""), err)
		}
		if n == 0 {
			return dirent{}, false, nil
		}
		f.pending = parseDirents(s.buf[:n])
	}
}

// parseDirents splits what getdents64 wrote into entries.
func parseDirents(b []byte) []dirent {
	var out []dirent
	for len(b) >= 19 {
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < 19 || reclen > len(b) {
			break
		}
		name := b[19:reclen]
		if i := indexNUL(name); i >= 0 {
			name = name[:i]
		}
		out = append(out, dirent{
			name: string(name),
			typ:  b[18],
			off:  int64(binary.NativeEndian.Uint64(b[8:16])),
		})
		b = b[reclen:]
	}
	return out
}

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

// path names frames[i]'s entry name (or frames[i] itself when name is
// empty) for a message, shortened in the middle when the tree is deep.
func (s *dirStack) path(i int, name string) string {
	var parts []string
	for _, f := range s.frames[:i+1] {
		parts = append(parts, f.name)
	}
	if name != "" {
		parts = append(parts, name)
	}
	parts = parts[1:] // frames[0] is the top itself
	if len(parts) > 8 {
		mid := fmt.Sprintf("…(%d levels)…", len(parts)-6)
		parts = append(append(parts[:3:3], mid), parts[len(parts)-3:]...)
	}
	return strings.Join(append([]string{s.top}, parts...), "/")
}

// walkHow opens directories to walk them: never through a symbolic link,
// never across a mount point.
var walkHow = unix.OpenHow{
	Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
	Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV,
}

// errMountInside: the walk met a mount point, and does not cross it.
var errMountInside = errors.New("a mount point: the walk does not cross into it")

// openChild opens the directory name in dirfd for a walk. need is the
// permission its owner must have for the walk: a directory the walker's
// identity owns is given it when it lacks it (granted, with the mode
// found kept in mode).
func openChild(dirfd int, name string, need uint32) (*walkFrame, error) {
	how := walkHow
	fd, err := unix.Openat2(dirfd, name, &how)
	var found uint32
	granted := false
	if errors.Is(err, unix.EACCES) {
		fd, found, err = openGranting(dirfd, name, need)
		granted = err == nil
	}
	if errors.Is(err, unix.EXDEV) {
		return nil, errMountInside
	}
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	f := &walkFrame{name: name, dev: st.Dev, ino: st.Ino, fd: fd, mode: st.Mode & 0o7777, granted: granted}
	if granted {
		f.mode = found
	} else if st.Mode&need != need && int(st.Uid) == os.Geteuid() {
		if err := unix.Fchmod(fd, f.mode|need); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("giving itself permission to walk it: %w", err)
		}
		f.granted = true
	}
	return f, nil
}

// openGranting opens a directory that could not be read. It opens it as
// a path only (which needs no permission on it), gives the owner need
// when that is the walker's identity, and opens it through that handle,
// so that nothing can be swapped in between. It returns the mode found.
func openGranting(dirfd int, name string, need uint32) (int, uint32, error) {
	how := walkHow
	how.Flags = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	pfd, err := unix.Openat2(dirfd, name, &how)
	if err != nil {
		return -1, 0, err
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return -1, 0, err
	}
	found := st.Mode & 0o7777
	if int(st.Uid) != os.Geteuid() {
		return -1, 0, unix.EACCES
	}
	if err := chmodFD(pfd, found|need); err != nil {
		return -1, 0, fmt.Errorf("giving itself permission to walk it: %w", err)
	}
	fd, err := unix.Openat(pfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		chmodFD(pfd, found)
		return -1, 0, err
	}
	return fd, found, nil
}

// chmodFD changes the mode of the file behind fd, which may be an O_PATH
// descriptor (fchmodat2 with AT_EMPTY_PATH, Linux 6.6; else through
// /proc/self/fd, which names the same file and follows no link).
func chmodFD(fd int, mode uint32) error {
	err := unix.Fchmodat(fd, "", mode, unix.AT_EMPTY_PATH)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL) {
		err = unix.Chmod(fmt.Sprintf("/proc/self/fd/%d", fd), mode)
	}
	return err
}
