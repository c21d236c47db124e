package attacks

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"

	"sandboxlab/sandbox/procfs"
)

// These read what the host's /proc says about one process (host PIDs, any
// namespace). They return zero values for a process that is gone.

// vmPeak returns the process's peak virtual memory size in bytes.
func vmPeak(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	return parseVmPeak(b)
}

// parseVmPeak reads the "VmPeak:  1234 kB" line of /proc/PID/status.
func parseVmPeak(status []byte) int64 {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmPeak:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

// openFDs returns how many descriptors the process holds open.
func openFDs(pid int) int {
	d, err := os.Open("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return 0
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	return len(names)
}

// mountedSource returns the mountinfo line of a mount of type fstype whose
// source is source, as the process sees its mounts, or "".
func mountedSource(pid int, fstype, source string) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/mountinfo")
	if err != nil {
		return ""
	}
	return findMount(b, fstype, source)
}

// findMount finds a mount by type and source in mountinfo text:
// "ID PARENT MAJ:MIN ROOT POINT OPTS [TAGS...] - TYPE SOURCE SUPEROPTS".
func findMount(mountinfo []byte, fstype, source string) string {
	for _, line := range strings.Split(string(mountinfo), "\n") {
		_, after, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f := strings.Fields(after)
		if len(f) >= 2 && f[0] == fstype && f[1] == source {
			return line
		}
	}
	return ""
}

// mountedOn reports whether mountinfo text has a mount on point.
func mountedOn(mountinfo []byte, point string) bool {
	for _, line := range strings.Split(string(mountinfo), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == point {
			return true
		}
	}
	return false
}

// pids lists the PIDs of procs, for evidence.
func pids(procs []procfs.Proc) string {
	s := make([]string, len(procs))
	for i, p := range procs {
		s[i] = strconv.Itoa(p.PID)
	}
	return strings.Join(s, ",")
}
