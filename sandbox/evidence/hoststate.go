package evidence

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ScratchRoots are where a program looks for directories it may write on
// a Linux host: the scratch directories every user may write, and the
// trees that often hold more of them.
var ScratchRoots = []string{"/tmp", "/var", "/run", "/dev/shm", "/dev/mqueue", "/srv", "/opt", "/mnt", "/media"}

// scratchDepth bounds the walk below each root.
const scratchDepth = 3

// WorldWritableDirs lists the directories below ScratchRoots (at most
// scratchDepth deep, without following links) that anyone may write in:
// where a program can leave something behind on the host.
func WorldWritableDirs() []string {
	var out []string
	for _, root := range ScratchRoots {
		base := strings.Count(root, "/")
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if strings.Count(p, "/")-base >= scratchDepth {
				return filepath.SkipDir
			}
			if info, err := d.Info(); err == nil && info.Mode().Perm()&0o002 != 0 {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

// HostTraces is what a program left on the host, found by the tag it
// was told to put in every name and the key it was told to use.
type HostTraces struct {
	// Files are entries named with the tag in world-writable directories.
	Files []string
	// SysV names the System V objects ("shm", "msg", "sem") with the key.
	SysV []string
	// Queue is true when a POSIX message queue named with the tag exists.
	Queue bool
}

// Empty reports whether nothing was left.
func (h HostTraces) Empty() bool { return len(h.Files) == 0 && len(h.SysV) == 0 && !h.Queue }

// FindHostTraces looks in the host's world-writable directories, its
// System V IPC tables and its POSIX message queues for what a program
// made with tag and key.
func FindHostTraces(tag string, key int32) HostTraces {
	var h HostTraces
	for _, dir := range WorldWritableDirs() {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.Contains(e.Name(), tag) {
				h.Files = append(h.Files, filepath.Join(dir, e.Name()))
			}
		}
	}
	for _, kind := range []string{"shm", "msg", "sem"} {
		if len(sysvIDs(kind, key)) > 0 {
			h.SysV = append(h.SysV, kind)
		}
	}
	h.Queue = queueExists(tag)
	return h
}

// RemoveHostTraces removes what FindHostTraces found: the files, the
// System V objects with key, and the queue named with tag.
func RemoveHostTraces(h HostTraces, tag string, key int32) error {
	var errs []error
	for _, f := range h.Files {
		if err := os.RemoveAll(f); err != nil {
			errs = append(errs, err)
		}
	}
	rm := map[string]uintptr{"shm": unix.SYS_SHMCTL, "msg": unix.SYS_MSGCTL, "sem": unix.SYS_SEMCTL}
	for kind, nr := range rm {
		for _, id := range sysvIDs(kind, key) {
			var e unix.Errno
			if kind == "sem" {
				_, _, e = unix.Syscall6(nr, uintptr(id), 0, unix.IPC_RMID, 0, 0, 0)
			} else {
				_, _, e = unix.Syscall(nr, uintptr(id), unix.IPC_RMID, 0)
			}
			if e != 0 {
				errs = append(errs, e)
			}
		}
	}
	if h.Queue {
		name, _ := unix.BytePtrFromString(tag)
		if _, _, e := unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(name)), 0, 0); e != 0 {
			errs = append(errs, e)
		}
	}
	return errors.Join(errs...)
}

// sysvIDs returns the ids of the System V objects of kind (shm, msg or
// sem) with key, from /proc/sysvipc: the host's IPC namespace as the
// harness sees it.
func sysvIDs(kind string, key int32) []int {
	b, err := os.ReadFile("/proc/sysvipc/" + kind)
	if err != nil {
		return nil
	}
	var ids []int
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Scan() // the header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		k, err1 := strconv.ParseInt(f[0], 10, 64)
		id, err2 := strconv.Atoi(f[1])
		if err1 == nil && err2 == nil && int32(k) == key {
			ids = append(ids, id)
		}
	}
	return ids
}

// queueExists reports whether the POSIX message queue /name exists in the
// harness's IPC namespace. mq_open's system call takes the name without
// its leading slash.
func queueExists(name string) bool {
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		return false
	}
	fd, _, e := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(p)), unix.O_RDONLY, 0, 0, 0, 0)
	if e != 0 {
		return false // ENOENT, or a queue this user may not open (then not ours)
	}
	unix.Close(int(fd))
	return true
}
