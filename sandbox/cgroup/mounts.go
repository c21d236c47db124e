package cgroup

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Mounts says where the caller's own control groups are, so that a run's
// group is made below them. Detect fills it from /proc; a test can build
// one by hand (an empty Mounts, or one pointing at a temporary directory)
// to see New fail closed.
type Mounts struct {
	// V1 maps a cgroup v1 controller ("memory", "pids", "cpu") to the
	// directory of the caller's group in the hierarchy that controller is
	// bound to. Co-mounted controllers map to the same directory.
	V1 map[string]string
	// V2 is the directory of the caller's group in the unified (cgroup v2)
	// hierarchy, or "" if there is none.
	V2 string
}

// v1Controllers are the v1 hierarchies a run's group is made in.
var v1Controllers = []string{"pids", "memory", "cpu"}

// Detect finds the caller's groups from /proc/self/mountinfo and
// /proc/self/cgroup: a group belongs below the caller's own group (inside a
// mutation worker's group, say), never at a fixed place, and only mounted
// hierarchies count, so a mount namespace without a controller's hierarchy
// makes New fail closed.
func Detect() (Mounts, error) {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return Mounts{}, fmt.Errorf("detecting cgroups: %w", err)
	}
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return Mounts{}, fmt.Errorf("detecting cgroups: %w", err)
	}
	return parseMounts(mi, cg, os.Getpid()), nil
}

type cgroupMount struct {
	root, point, fstype string
	opts                map[string]bool
}

// parseMounts joins the cgroup mounts of a mountinfo file with the paths of
// a /proc/PID/cgroup file. pid is the caller's: a v2 group named after it by
// moveSelf stands for its parent.
func parseMounts(mountinfo, procCgroup []byte, pid int) Mounts {
	var mounts []cgroupMount
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		// ID parent major:minor root mountpoint options [optional...] - fstype source superoptions
		f := strings.Fields(sc.Text())
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+3 >= len(f) {
			continue
		}
		fstype := f[sep+1]
		if fstype != "cgroup" && fstype != "cgroup2" {
			continue
		}
		m := cgroupMount{root: unescape(f[3]), point: unescape(f[4]), fstype: fstype, opts: map[string]bool{}}
		for _, o := range strings.Split(f[sep+3], ",") {
			m.opts[o] = true
		}
		mounts = append(mounts, m)
	}

	var ms Mounts
	sc = bufio.NewScanner(bytes.NewReader(procCgroup))
	for sc.Scan() {
		// hierarchy-ID:controller-list:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		path := parts[2]
		if parts[0] == "0" && parts[1] == "" {
			for _, m := range mounts {
				if m.fstype != "cgroup2" {
					continue
				}
				if dir, ok := below(m, path); ok {
					if filepath.Base(dir) == callerLeaf(pid) {
						dir = filepath.Dir(dir)
					}
					ms.V2 = dir
					break
				}
			}
			continue
		}
		for _, ctl := range strings.Split(parts[1], ",") {
			if !wanted(ctl) {
				continue
			}
			for _, m := range mounts {
				if m.fstype != "cgroup" || !m.opts[ctl] {
					continue
				}
				if dir, ok := below(m, path); ok {
					if ms.V1 == nil {
						ms.V1 = map[string]string{}
					}
					ms.V1[ctl] = dir
					break
				}
			}
		}
	}
	return ms
}

func wanted(ctl string) bool {
	for _, c := range v1Controllers {
		if c == ctl {
			return true
		}
	}
	return false
}

// below maps a path in a hierarchy to a directory under mount m, which may
// show only part of the hierarchy (its root field); a path outside that
// part (another cgroup namespace's, say) is not reachable through m.
func below(m cgroupMount, path string) (string, bool) {
	path = filepath.Clean(path)
	root := filepath.Clean(m.root)
	if !filepath.IsAbs(path) {
		return "", false
	}
	var rel string
	switch {
	case root == "/":
		rel = path
	case path == root:
		rel = "/"
	case strings.HasPrefix(path, root+"/"):
		rel = strings.TrimPrefix(path, root)
	default:
		return "", false
	}
	return filepath.Join(m.point, rel), true
}

// unescape undoes mountinfo's octal escapes (\040 for a space, and so on).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// callerLeaf names the v2 group the caller moves itself into when the
// no-internal-process rule requires it (see moveSelf).
func callerLeaf(pid int) string {
	return "sandboxlab-caller-" + strconv.Itoa(pid)
}
