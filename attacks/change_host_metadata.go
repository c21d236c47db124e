package attacks

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/sandbox"
)

var changeHostMetadataSpec = &spec{
	id:        "change_host_metadata",
	escapes:   "changes the mode, a time or the extended attributes of a file of its own host user's outside its session",
	firstStop: 6,
	new:       func() attack { return &changeHostMetadata{} },
	elsewhere: elsewhere{harmlessAsRoot: true},
}

// changeHostMetadata's target belongs to the program's host identity and
// lies outside every hidden and private directory: its owner may change
// its metadata, and Landlock has no right for that.
type changeHostMetadata struct {
	rootWatch
	path, before string
}

func (c *changeHostMetadata) setup(e *env) error {
	dir := filepath.Join(e.fx.root, "owned")
	c.path = filepath.Join(dir, "notes.txt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(c.path, []byte("# notes\n"), 0o644); err != nil {
		return err
	}
	then := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	if err := os.Chtimes(c.path, then, then); err != nil {
		return err
	}
	id := sandbox.HostIdentity()
	for _, p := range []string{dir, c.path} {
		if err := os.Chown(p, id.UID, id.GID); err != nil {
			return err
		}
	}
	c.before = metadata(c.path) + " | " + metadata(dir)
	return nil
}

func (c *changeHostMetadata) args(*env) []string { return []string{c.path} }

func (c *changeHostMetadata) judge(e *env) verdict {
	if after := metadata(c.path) + " | " + metadata(filepath.Dir(c.path)); after != c.before {
		return escaped("%s changed on the host: %s, now %s", c.path, c.before, after)
	}
	own, note := c.ownRoot(e)
	return e.layer(own, "allowlist root: the file is absent", "%s unchanged; %s%s",
		c.path, strings.ReplaceAll(strings.TrimSpace(e.res.Stdout), "\n", "; "), note)
}

// metadata is what the judge compares of path: its mode, modification
// time and extended attributes ("gone" when it cannot be read).
func metadata(path string) string {
	st, err := os.Lstat(path)
	if err != nil {
		return "gone"
	}
	buf := make([]byte, 4096)
	n, err := unix.Llistxattr(path, buf)
	if err != nil {
		n = 0
	}
	names := strings.ReplaceAll(strings.TrimRight(string(buf[:n]), "\x00"), "\x00", ",")
	return st.Mode().String() + " " + st.ModTime().UTC().Format(time.RFC3339) + " xattrs[" + names + "]"
}
