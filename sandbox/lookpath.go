package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// LookPath finds the program name as the sandbox under p will see it, as
// bubblewrap and a shell inside it would: a name with a slash is taken as
// it is (relative to the caller's directory); a bare name is looked up in
// the PATH the program gets (the scrubbed one from L2 up, else env's), in
// the sandbox's view of the files: not beneath a path the policy hides,
// and reachable by the program's host identity. A version manager's shim
// (pyenv's python3 under /root, say) found first on the caller's PATH is
// thus never chosen when the sandbox cannot run it.
//
// When nothing inside answers, the error wraps exec.ErrNotFound (a run's
// Result says not_found) and, when the caller's PATH has the name, says
// both: where it is on the host and why the sandbox does not see it.
// env is the caller's environment (nil: os.Environ()).
func LookPath(p Policy, name string, env []string) (string, error) {
	if name == "" {
		return "", &NotFoundError{Name: name, Message: "no program named"}
	}
	if strings.Contains(name, "/") {
		return filepath.Abs(name)
	}
	inside := envValue(environment(p, Command{Env: env}, "/"), "PATH")
	var why []string
	for _, dir := range filepath.SplitList(inside) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // the program's directory is not the caller's: no relative PATH entries
		}
		path := filepath.Join(dir, name)
		reason := p.unseen(path)
		if reason == nil {
			return path, nil
		}
		if !errors.Is(reason, fs.ErrNotExist) {
			why = append(why, reason.Error())
		}
	}
	msg := fmt.Sprintf("%s: inside, PATH is %s and has no %s", name, inside, name)
	if host, err := exec.LookPath(name); err == nil {
		if abs, err := filepath.Abs(host); err == nil {
			host = abs
		}
		msg = fmt.Sprintf("%s is %s on the host, which %s; inside, PATH is %s and has no %s",
			name, host, p.hostReason(host), inside, name)
	}
	if len(why) > 0 {
		msg += " (" + strings.Join(why, "; ") + ")"
	}
	return "", &NotFoundError{Name: name, Message: msg}
}

// NotFoundError is LookPath's: no program of the name in the sandbox's
// view. It is exec.ErrNotFound (errors.Is), and its message says where
// the sandbox looked and, when the host has the name, why the sandbox
// does not see it.
type NotFoundError struct {
	Name    string
	Message string
}

func (e *NotFoundError) Error() string { return e.Message }

func (e *NotFoundError) Unwrap() error { return exec.ErrNotFound }

// envValue returns the value of key in env ("" if absent).
func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

// unseen says why the program under p cannot run path (nil: it can):
// it does not exist, it lies beneath a hidden path, it is not a regular
// executable file, or the program's identity cannot reach it.
func (p Policy) unseen(path string) error {
	if h := p.hiddenBy(path); h != "" {
		return fmt.Errorf("%s is beneath %s, which this level hides", path, h)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	if h := p.hiddenBy(real); h != "" {
		return fmt.Errorf("%s leads to %s, beneath %s, which this level hides", path, real, h)
	}
	st, err := os.Stat(real)
	switch {
	case err != nil:
		return err
	case !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s is not an executable file", path)
	}
	if why := reachable(real, HostIdentity()); why != "" {
		return fmt.Errorf("%s: %s", path, why)
	}
	return nil
}

// hiddenBy returns the hidden path of p that holds path, or "": at L6,
// everything outside the exposed paths (Filesystem.Expose) is hidden.
func (p Policy) hiddenBy(path string) string {
	for _, h := range p.Filesystem.Hide {
		if within(path, filepath.Clean(h)) {
			return h
		}
	}
	if exposed := p.Filesystem.Expose; len(exposed) > 0 {
		for _, e := range expandPaths(exposed) {
			if within(path, filepath.Clean(e)) {
				return ""
			}
		}
		return "everything outside the exposed paths"
	}
	return ""
}

// hostReason says why the sandbox under p does not run the host's path.
func (p Policy) hostReason(path string) string {
	err := p.unseen(path)
	if err == nil {
		return "lies outside the PATH the program gets"
	}
	if h := p.hiddenBy(path); h != "" {
		return "this level hides (" + h + ")"
	}
	real, _ := filepath.EvalSymlinks(path)
	if h := p.hiddenBy(real); real != "" && h != "" {
		return "leads to " + real + ", which this level hides (" + h + ")"
	}
	return "the program cannot run: " + err.Error()
}

// reachable says why id cannot search every directory down to path and
// execute it ("" when it can), from the permission bits: root's own
// checks would say yes to everything.
func reachable(path string, id Identity) string {
	dirs := []string{}
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		dirs = append([]string{d}, dirs...)
		if d == "/" {
			break
		}
	}
	for _, d := range dirs {
		if !permits(d, id, 0o1) {
			return fmt.Sprintf("uid %d cannot enter %s", id.UID, d)
		}
	}
	if !permits(path, id, 0o1) {
		return fmt.Sprintf("uid %d cannot execute it", id.UID)
	}
	return ""
}

// permits reports whether id has the permission bits want (0o1 execute or
// search, 0o4 read) on path, as the owner, the group or other.
func permits(path string, id Identity, want os.FileMode) bool {
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	perm := st.Mode().Perm()
	switch {
	case int(sys.Uid) == id.UID:
		return perm>>6&want == want
	case int(sys.Gid) == id.GID:
		return perm>>3&want == want
	}
	return perm&want == want
}
