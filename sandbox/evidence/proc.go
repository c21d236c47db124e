package evidence

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"sandboxlab/sandbox/procfs"
)

// These read what the host's /proc says about one process (host PIDs, any
// namespace). Those that take a pid return zero values for a process that
// is gone.

// Status is the text of one /proc/PID/status, read at once: a caller that
// must know every field came from the same process reads it once, checks
// the process is still the one it meant, then takes the fields.
type Status []byte

// ReadStatus reads /proc/PID/status.
func ReadStatus(pid int) (Status, error) {
	return os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
}

// Field returns a field's value, named without its colon ("CapEff"),
// trimmed; "" when there is no such field.
func (s Status) Field(name string) string { return procfs.StatusField(s, name) }

// Hex returns a hexadecimal field (a capability set, a signal mask); 0
// when there is no such field.
func (s Status) Hex(name string) uint64 {
	v, _ := strconv.ParseUint(s.Field(name), 16, 64)
	return v
}

// KB returns a field counted in kB ("VmPeak:  1234 kB") as that number of
// kB; 0 when there is no such field.
func (s Status) KB(name string) int64 {
	f := strings.Fields(s.Field(name))
	if len(f) == 0 {
		return 0
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// StatusField reads one field of pid's status ("" if it is gone).
func StatusField(pid int, name string) string {
	s, _ := ReadStatus(pid)
	return s.Field(name)
}

// StatusHex reads a hexadecimal field of pid's status (0 if it is gone).
func StatusHex(pid int, name string) uint64 {
	s, _ := ReadStatus(pid)
	return s.Hex(name)
}

// StatusKB reads a field of pid's status counted in kB (0 if it is gone).
func StatusKB(pid int, name string) int64 {
	s, _ := ReadStatus(pid)
	return s.KB(name)
}

// OpenFDs returns how many descriptors pid holds open.
func OpenFDs(pid int) int {
	d, err := os.Open("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return 0
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	return len(names)
}

// Mount is one line of /proc/PID/mountinfo, as far as evidence needs it:
// "ID PARENT MAJ:MIN ROOT POINT OPTS [TAGS...] - TYPE SOURCE SUPEROPTS".
// Fields are as the kernel writes them (a space in a path is "\040").
type Mount struct {
	Point  string
	Type   string
	Source string
	// Dev is the filesystem's device ("0:44"): every tmpfs has its own.
	Dev string
}

// ParseMountinfo parses mountinfo text.
func ParseMountinfo(text []byte) []Mount {
	var out []Mount
	for _, line := range strings.Split(string(text), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		var m Mount
		if len(f) > 4 {
			m.Dev, m.Point = f[2], f[4]
		}
		if _, after, ok := strings.Cut(line, " - "); ok {
			if a := strings.Fields(after); len(a) >= 2 {
				m.Type, m.Source = a[0], a[1]
			}
		}
		out = append(out, m)
	}
	return out
}

// Mountinfo reads the mounts pid sees, in its own mount namespace.
func Mountinfo(pid int) ([]Mount, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/mountinfo")
	if err != nil {
		return nil, err
	}
	return ParseMountinfo(b), nil
}

// FindMount returns the first mount of type fstype whose source is source.
func FindMount(mounts []Mount, fstype, source string) (Mount, bool) {
	for _, m := range mounts {
		if m.Type == fstype && m.Source == source && m.Type != "" {
			return m, true
		}
	}
	return Mount{}, false
}

// Top returns the topmost mount on point (the one a path there resolves
// to), and false when nothing is mounted there.
func Top(mounts []Mount, point string) (Mount, bool) {
	var top Mount
	found := false
	for _, m := range mounts {
		if m.Point == point {
			top, found = m, true
		}
	}
	return top, found
}

// PrivateTmpfs reports whether, in the mounts a program sees, point is
// covered by a tmpfs that is not the host's (the harness's own mounts):
// one made for it alone.
func PrivateTmpfs(program, host []Mount, point string) bool {
	m, ok := Top(program, point)
	if !ok || m.Type != "tmpfs" {
		return false
	}
	h, ok := Top(host, point)
	return !ok || h.Dev != m.Dev
}

// MountedOn reports whether something is mounted on point.
func MountedOn(mounts []Mount, point string) bool {
	for _, m := range mounts {
		if m.Point == point && point != "" {
			return true
		}
	}
	return false
}

// AIORings counts the asynchronous I/O contexts pid holds: the kernel
// maps each into its owner as "[aio]".
func AIORings(pid int) int {
	maps, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
	return strings.Count(string(maps), "[aio]")
}

// Watch is one inotify watch a process holds: the watched inode's
// number and its filesystem's device, as the kernel encodes them.
type Watch struct{ Ino, Dev uint64 }

// WatchOf is the Watch that the kernel would list for a watch on path.
func WatchOf(path string) (Watch, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return Watch{}, err
	}
	// fdinfo gives the superblock's s_dev: MAJOR<<20 | MINOR.
	return Watch{Ino: st.Ino, Dev: uint64(unix.Major(st.Dev))<<20 | uint64(unix.Minor(st.Dev))}, nil
}

// InotifyWatches lists the watches of every inotify descriptor pid
// holds, from its fdinfo ("inotify wd:1 ino:1a2b sdev:800001 ...").
func InotifyWatches(pid int) []Watch {
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	entries, _ := os.ReadDir(dir + "fd")
	var out []Watch
	for _, e := range entries {
		if link, _ := os.Readlink(dir + "fd/" + e.Name()); link != "anon_inode:inotify" {
			continue
		}
		info, _ := os.ReadFile(dir + "fdinfo/" + e.Name())
		for _, line := range strings.Split(string(info), "\n") {
			if !strings.HasPrefix(line, "inotify ") {
				continue
			}
			var w Watch
			for _, f := range strings.Fields(line) {
				if v, ok := strings.CutPrefix(f, "ino:"); ok {
					w.Ino, _ = strconv.ParseUint(v, 16, 64)
				} else if v, ok := strings.CutPrefix(f, "sdev:"); ok {
					w.Dev, _ = strconv.ParseUint(v, 16, 64)
				}
			}
			out = append(out, w)
		}
	}
	return out
}
