package evidence

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"sandboxlab/sandbox/procfs"
)

// FixturesEnv names a directory the fixtures go below instead of the
// default; the mutation harness gives each of its workers its own.
const FixturesEnv = "SANDBOXLAB_FIXTURES"

// FixtureRoot returns the directory below which checks and attacks make
// their fixtures: fakes of what a user's machine holds (a home with a
// key, an application's directory, a host secret). It lies outside the
// scratch directories that L5 makes private, as a user's files do, so
// that at L5 only the layer under test hides them from the program:
// $SANDBOXLAB_FIXTURES when set, else /var/lib/sandboxlab for root, else
// the user's cache directory. It is made if missing (mode 0711: the
// program's identity may pass through, not list).
func FixtureRoot() (string, error) {
	var candidates []string
	if dir := os.Getenv(FixturesEnv); dir != "" {
		candidates = []string{dir}
	} else {
		if os.Geteuid() == 0 {
			candidates = append(candidates, "/var/lib/sandboxlab")
		}
		if cache, err := os.UserCacheDir(); err == nil {
			candidates = append(candidates, filepath.Join(cache, "sandboxlab"))
		}
	}
	var errs []error
	for _, dir := range candidates {
		err := os.MkdirAll(dir, 0o711)
		if err == nil {
			return dir, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return "", errors.New("fixture directory: no candidate (set " + FixturesEnv + ")")
	}
	return "", fmt.Errorf("fixture directory: %w", errors.Join(errs...))
}

// NewFixtureDir makes a fresh directory below base for one probe's
// fixtures (mode 0711), named prefix, the calling process's owner name
// (procfs.Owner) and a random tail. It first removes, once per process,
// what processes killed before they could clean up (SIGKILL, a machine's
// restart) left below base under the same prefix: their owner names say
// they have ended (procfs.Orphaned). A directory of a process still
// running is never touched.
func NewFixtureDir(base, prefix string) (string, error) {
	if _, done := swept.LoadOrStore(base+"\x00"+prefix, true); !done {
		for _, dir := range procfs.Orphaned(base, prefix) {
			RemoveFixtureDir(dir) // best effort: a leftover never stops a probe
		}
	}
	dir, err := os.MkdirTemp(base, prefix+procfs.Owner()+"-")
	if err != nil {
		return "", fmt.Errorf("making the fixture directory: %w", err)
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		os.Remove(dir)
		return "", fmt.Errorf("making the fixture directory: %w", err)
	}
	return dir, nil
}

// swept holds the bases and prefixes NewFixtureDir has swept.
var swept sync.Map

// RemoveFixtureDir removes a probe's fixture directory and everything
// below it. A session that a defect kept (workdir_kept: Close leaves it),
// or one whose process was killed, may still have its own filesystem
// mounted there (L6's disk cap), which os.RemoveAll cannot cross: every
// mount below dir is detached first, the deepest first.
func RemoveFixtureDir(dir string) error {
	mounts := MountsBelow(dir)
	for i := len(mounts) - 1; i >= 0; i-- {
		unix.Unmount(mounts[i], unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing fixtures: %w", err)
	}
	return nil
}

// MountsBelow lists the mount points strictly below dir in this process's
// mount namespace, in the order they were mounted (/proc/self/mountinfo's
// fifth field, its octal escapes undone).
func MountsBelow(dir string) []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	prefix := filepath.Clean(dir) + "/"
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		if m := unescapeMount(f[4]); strings.HasPrefix(m, prefix) {
			out = append(out, m)
		}
	}
	return out
}

// unescapeMount undoes mountinfo's escapes of space, tab, newline and
// backslash (\040 and the like).
func unescapeMount(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var c int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &c); err == nil {
				b.WriteByte(byte(c))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
