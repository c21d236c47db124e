package sandbox

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"sandboxlab/mutants"
)

// The host-side file API copies files in and out of a session with the
// host's privileges, taking names chosen by the sandboxed program. Three
// guards keep it from being the way out:
//
//   - name guards reject absolute names and '..' components that leave the
//     directory, with a message that says why;
//   - the link guard lets the kernel resolve every name beneath the
//     session directory, refusing every symlink on the way
//     (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS), and refuses files with
//     more than one hard link;
//   - the type guard reads and writes regular files only, opening with
//     O_NONBLOCK so that a FIFO cannot hang the host.
//
// The link guard alone also refuses '..' escapes and absolute names; the
// name guards are there for the clear message. That overlap makes the
// defects that remove one name guard equivalent mutants.

var (
	// ErrName: the name is empty, holds a NUL byte, is absolute or leaves
	// the session directory.
	ErrName = errors.New("file name refused")
	// ErrLink: the name passes through a symbolic link, or the file has
	// other hard links.
	ErrLink = errors.New("link refused")
	// ErrNotRegular: the name is a directory, FIFO, socket or device.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: the file is over MaxFileSize.
	ErrTooLarge = errors.New("file too large")
)

const (
	// MaxFileSize bounds what ReadFile and WriteFile move in one call.
	MaxFileSize = 8 << 20
	// MaxListed bounds the files listed in a Result.
	MaxListed = 100
	// maxListAll bounds List.
	maxListAll = 10000
)

// checkName applies the name guards.
func checkName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: the name is empty", ErrName)
	case strings.IndexByte(name, 0) >= 0:
		return fmt.Errorf("%w: %q contains a NUL byte", ErrName, name)
	case strings.HasPrefix(name, "/") && !mutants.On(mutants.AbsPathOK) && !mutants.On(mutants.PathGuardsOff):
		return fmt.Errorf("%w: %q is absolute; names are relative to the session directory", ErrName, name)
	}
	if c := path.Clean(name); (c == ".." || strings.HasPrefix(c, "../")) &&
		!mutants.On(mutants.TraversalOK) && !mutants.On(mutants.PathGuardsOff) {
		return fmt.Errorf("%w: %q leaves the session directory", ErrName, name)
	}
	if path.Clean(name) == "." {
		return fmt.Errorf("%w: %q names the session directory itself", ErrName, name)
	}
	return nil
}

// resolveFlags is the kernel's half of the link guard.
const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openBeneath opens name below dir under the link guard.
func openBeneath(dir, name string, flags int, mode uint32) (int, error) {
	flags |= unix.O_CLOEXEC
	if flags&unix.O_PATH == 0 {
		flags |= unix.O_NONBLOCK // openat2 refuses it with O_PATH
	}
	if mutants.On(mutants.LinksFollowed) {
		fd, err := unix.Open(filepath.Join(dir, name), flags, mode)
		return fd, fileErr(name, err)
	}
	root, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("opening session directory: %w", err)
	}
	defer unix.Close(root)
	if mutants.On(mutants.PathGuardsOff) {
		fd, err := unix.Openat(root, name, flags, mode)
		return fd, fileErr(name, err)
	}
	if flags&unix.O_PATH == 0 {
		// With O_PATH, O_NOFOLLOW would open a trailing link itself;
		// without it RESOLVE_NO_SYMLINKS refuses the link (ELOOP).
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Openat2(root, name, &unix.OpenHow{
		Flags:   uint64(flags),
		Mode:    uint64(mode),
		Resolve: resolveFlags,
	})
	return fd, fileErr(name, err)
}

// fileErr turns the kernel's refusals into the API's errors.
func fileErr(name string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ELOOP):
		return fmt.Errorf("%w: %q is or passes through a symbolic link", ErrLink, name)
	case errors.Is(err, unix.EXDEV):
		return fmt.Errorf("%w: %q leaves the session directory", ErrName, name)
	case errors.Is(err, unix.ENXIO), errors.Is(err, unix.EISDIR):
		return fmt.Errorf("%w: %q", ErrNotRegular, name)
	}
	return &fs.PathError{Op: "open", Path: name, Err: err}
}

// checkFile applies the type guard and the hard-link half of the link guard.
func checkFile(name string, fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG && !mutants.On(mutants.SpecialFilesOK) {
		return fmt.Errorf("%w: %q is a %s", ErrNotRegular, name, typeName(st.Mode))
	}
	if st.Nlink > 1 && !mutants.On(mutants.LinksFollowed) && !mutants.On(mutants.PathGuardsOff) {
		// It may be the same file as one outside the session.
		return fmt.Errorf("%w: %q has %d hard links", ErrLink, name, st.Nlink)
	}
	return nil
}

func typeName(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return "directory"
	case unix.S_IFIFO:
		return "FIFO"
	case unix.S_IFSOCK:
		return "socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "device"
	case unix.S_IFLNK:
		return "symbolic link"
	}
	return "special file"
}

// ReadFile returns the content of the regular file name in the session's
// directory (at most MaxFileSize bytes).
func (s *Session) ReadFile(name string) ([]byte, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	fd, err := openBeneath(s.Dir(), name, unix.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if err := checkFile(name, fd); err != nil {
		return nil, err
	}
	// Plain read(2) on the non-blocking descriptor: a FIFO with a writer
	// but no data answers EAGAIN instead of blocking the host.
	var out []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			return out, nil
		}
		out = append(out, buf[:n]...)
		if len(out) > MaxFileSize {
			return nil, fmt.Errorf("%w: %q is over %d bytes", ErrTooLarge, name, MaxFileSize)
		}
	}
}

// WriteFile writes data to the regular file name in the session's
// directory, making missing parent directories. The file belongs to the
// program's identity so the next run can change it. It is replaced
// whole or not at all: the data goes to a new file beside it, renamed
// over it once all of it is written, so a write that fails (the
// session's disk full) leaves the old content, or no file, as it was.
func (s *Session) WriteFile(name string, data []byte) error {
	if len(data) > MaxFileSize {
		return fmt.Errorf("%w: %d bytes for %q, over %d", ErrTooLarge, len(data), name, MaxFileSize)
	}
	if err := checkName(name); err != nil {
		return err
	}
	dir := s.Dir()
	if parent := path.Dir(path.Clean(name)); parent != "." && !strings.HasPrefix(name, "/") {
		if err := s.mkdirs(dir, parent); err != nil {
			return err
		}
	}
	// The file is opened, and so judged by the guards, as it always was.
	created := false
	fd, err := openBeneath(dir, name, unix.O_WRONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		fd, err = openBeneath(dir, name, unix.O_WRONLY|unix.O_CREAT, 0o644)
		created = err == nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := checkFile(name, fd); err != nil {
		return err
	}
	if replaced, err := s.replaceWhole(dir, name, fd, data, created); replaced || err != nil {
		return err
	}
	// What fd holds is not the file the name holds itself, or not a
	// regular file: only a planted defect (links_followed,
	// special_files_ok) opens such a thing. It is written in place, as
	// the defective sandbox would.
	if err := unix.Ftruncate(fd, 0); err != nil {
		return &fs.PathError{Op: "truncate", Path: name, Err: err}
	}
	if err := writeAll(fd, data); err != nil {
		return &fs.PathError{Op: "write", Path: name, Err: err}
	}
	if err := unix.Fchown(fd, s.id.UID, s.id.GID); err != nil {
		return &fs.PathError{Op: "chown", Path: name, Err: err}
	}
	return nil
}

// replaceWhole writes data to a new file beside name and renames it over
// name, whose file fd holds; created says WriteFile made that file, empty,
// to be removed again if the write fails. It reports false, having done
// nothing, when fd is not a regular file or not the file the name holds
// itself.
func (s *Session) replaceWhole(dir, name string, fd int, data []byte, created bool) (bool, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false, nil
	}
	clean := path.Clean(name)
	pfd, err := openBeneath(dir, path.Dir(clean), unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return false, err
	}
	defer unix.Close(pfd)
	base := path.Base(clean)
	var at unix.Stat_t
	if err := unix.Fstatat(pfd, base, &at, unix.AT_SYMLINK_NOFOLLOW); err != nil || at.Dev != st.Dev || at.Ino != st.Ino {
		return false, nil
	}
	tmp := fmt.Sprintf(".sandboxlab-write-%d-%d", os.Getpid(), rand.Uint64())
	tfd, err := unix.Openat(pfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return true, fmt.Errorf("%q was not written: %w", name, &fs.PathError{Op: "create", Path: tmp, Err: err})
	}
	done := false
	defer func() {
		unix.Close(tfd)
		if done {
			return
		}
		unix.Unlinkat(pfd, tmp, 0)
		if created {
			unix.Unlinkat(pfd, base, 0) // the empty file WriteFile made
		}
	}()
	kept := "its old content is kept"
	if created {
		kept = "no file was made"
	}
	if err := writeAll(tfd, data); err != nil {
		return true, fmt.Errorf("%q was not written (%s): %w", name, kept, &fs.PathError{Op: "write", Path: name, Err: err})
	}
	if err := unix.Fchmod(tfd, st.Mode&0o777); err != nil {
		return true, &fs.PathError{Op: "chmod", Path: name, Err: err}
	}
	if err := unix.Fchown(tfd, s.id.UID, s.id.GID); err != nil {
		return true, &fs.PathError{Op: "chown", Path: name, Err: err}
	}
	if err := unix.Renameat(pfd, tmp, pfd, base); err != nil {
		return true, fmt.Errorf("%q was not written (%s): %w", name, kept, &fs.PathError{Op: "rename", Path: name, Err: err})
	}
	done = true
	return true, nil
}

// writeAll writes all of data to fd.
func writeAll(fd int, data []byte) error {
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// mkdirs makes the directories of rel below dir one component at a time,
// each under the link guard.
func (s *Session) mkdirs(dir, rel string) error {
	cur := ""
	for _, c := range strings.Split(rel, "/") {
		if c == "" || c == "." {
			continue
		}
		cur = path.Join(cur, c)
		fd, err := openBeneath(dir, cur, unix.O_PATH|unix.O_DIRECTORY, 0)
		if err == nil {
			unix.Close(fd)
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		parent, err := openBeneath(dir, path.Dir(cur), unix.O_PATH|unix.O_DIRECTORY, 0)
		if err != nil {
			return err
		}
		err = unix.Mkdirat(parent, c, 0o755)
		if err == nil {
			err = unix.Fchownat(parent, c, s.id.UID, s.id.GID, unix.AT_SYMLINK_NOFOLLOW)
		}
		unix.Close(parent)
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return &fs.PathError{Op: "mkdir", Path: cur, Err: err}
		}
	}
	return nil
}

// Remove deletes the file, link or empty directory name. It never follows
// a link: removing a link removes the link.
func (s *Session) Remove(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	clean := path.Clean(name)
	parent, err := openBeneath(s.Dir(), path.Dir(clean), unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	base := path.Base(clean)
	err = unix.Unlinkat(parent, base, 0)
	if errors.Is(err, unix.EISDIR) {
		err = unix.Unlinkat(parent, base, unix.AT_REMOVEDIR)
	}
	if err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	return nil
}

// List returns what is in the session's directory, sorted by name,
// without following links.
func (s *Session) List() ([]FileInfo, error) {
	files, _, err := list(s.Dir(), maxListAll)
	return files, err
}

// listed is List for a Result: bounded, and never an error.
func (s *Session) listed() ([]FileInfo, bool) {
	files, more, _ := list(s.dir, MaxListed)
	return files, more
}

func list(dir string, max int) ([]FileInfo, bool, error) {
	var files []FileInfo
	more := false
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil && p == dir {
			return err
		}
		if err != nil {
			// What the program made unlistable (a tree past PATH_MAX, a
			// directory of mode 000) is left out and the list says it is
			// incomplete; removal and the quota walk it all the same.
			more = true
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if p == dir {
			return nil
		}
		if len(files) == max {
			more = true
			return filepath.SkipAll
		}
		rel, _ := filepath.Rel(dir, p)
		fi := FileInfo{Name: filepath.ToSlash(rel), Type: "other"}
		if !utf8.ValidString(fi.Name) {
			fi.NameBase64 = base64.StdEncoding.EncodeToString([]byte(fi.Name))
		}
		switch t := d.Type(); {
		case t.IsRegular():
			fi.Type = "file"
			if info, err := d.Info(); err == nil {
				fi.Size = info.Size()
			}
		case t.IsDir():
			fi.Type = "dir"
		case t&fs.ModeSymlink != 0:
			fi.Type = "link"
		}
		files = append(files, fi)
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files, more, err
}
