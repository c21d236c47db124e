package attacks

import (
	"os"
	"path/filepath"
	"strings"

	"sandboxlab/sandbox"
)

var writeOutsideSpec = &spec{
	id:        "write_outside",
	escapes:   "changes a file of its own host user's outside its session directory",
	firstStop: 6,
	new:       func() attack { return &writeOutside{} },
	elsewhere: elsewhere{harmlessAsRoot: true},
}

// writeOutside's target belongs to the program's host identity, as a
// user's own files belong to the user who runs the agent, and lies
// outside every hidden and private directory: only what restricts the
// filesystem beyond ownership stands in the way. At L6 that is first the
// allowlist root, where the file is absent, and Landlock behind it; the
// judge names the one the host saw (the program's root), not the one the
// policy lists first.
type writeOutside struct {
	rootWatch
	path, before string
}

func (w *writeOutside) setup(e *env) error {
	dir := filepath.Join(e.fx.root, "shared")
	w.path = filepath.Join(dir, "notes.txt")
	w.before = "# notes\n"
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(w.path, []byte(w.before), 0o644); err != nil {
		return err
	}
	id := sandbox.HostIdentity()
	for _, p := range []string{dir, w.path} {
		if err := os.Chown(p, id.UID, id.GID); err != nil {
			return err
		}
	}
	return nil
}

func (w *writeOutside) args(*env) []string { return []string{w.path} }

func (w *writeOutside) judge(e *env) verdict {
	b, err := os.ReadFile(w.path)
	if err == nil && string(b) != w.before {
		return escaped("%s changed on the host (%d bytes now)", w.path, len(b))
	}
	out := strings.TrimSpace(e.res.Stdout)
	// Only sandboxlab's root is named: another sandbox's root of its own
	// is not this mechanism, and its cells name none (see the columns).
	if own, note := w.ownRoot(e); own && len(e.policy.Filesystem.Expose) > 0 {
		switch {
		case strings.Contains(out, "No such file or directory"):
			return e.layer(true, "allowlist root: the file is absent", "%s unchanged; %s%s", w.path, out, note)
		case strings.Contains(out, "Read-only file system"):
			return e.layer(true, "allowlist root: bound read-only", "%s unchanged; %s%s", w.path, out, note)
		}
	}
	return e.layer(e.policy.Hardened.Landlock, "Landlock", "%s unchanged; %s", w.path, out)
}
