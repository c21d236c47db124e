package boot

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// CgroupTasksFD is the first of the descriptors on which a cgroup v1 init
// finds the "tasks" files of the run's group, one per hierarchy, opened
// by the parent (the init's host identity could not open them itself).
const CgroupTasksFD = 4

// joinCgroup runs in the init, on the thread that will exec the program:
// it moves that thread, and so the program, into the run's group, in each
// of the n hierarchies whose tasks files it holds. It writes with bare
// system calls, since by then the init is under its Landlock rules and
// system-call filter, and allocates nothing.
func joinCgroup(n int) error {
	for fd := CgroupTasksFD; fd < CgroupTasksFD+n; fd++ {
		if err := writeTasks(fd); err != nil {
			return fmt.Errorf("joining the run's control group: %w", err)
		}
		unix.Close(fd)
	}
	return nil
}

// writeTasks moves the calling thread into the v1 group whose tasks file
// is open on fd.
func writeTasks(fd int) error {
	zero := []byte{'0'}
	_, err := unix.Write(fd, zero)
	for err == unix.EINTR {
		_, err = unix.Write(fd, zero)
	}
	return err
}
