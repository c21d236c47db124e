package attacks

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/procfs"
)

// fixtures are the fakes one cell's attack goes after, made fresh under a
// directory of their own and removed with it. Never real secrets, never
// real host files.
type fixtures struct {
	// root holds everything else (mode 0711: the program's identity may
	// pass through but not list it). Session directories are made in it.
	root string

	// home is a fake home directory with a fake SSH key and a .bashrc,
	// owned by the program's host identity as a user's home belongs to the
	// user who runs the agent.
	home       string
	sshKey     string // home/.ssh/id_ed25519
	keySecret  string // the random part of the key's content
	homeBefore map[string]string

	// appDir is the application's directory (the program's working
	// directory at L0–L1), with appFile in it, both owned by the program's
	// identity.
	appDir     string
	appFile    string
	appContent string

	// apiKey is the fake API key in the environment the harness passes down.
	apiKey string
	// env is the program's environment as the harness gives it.
	env []string

	// hostSecret is a file of the harness's own (mode 0600) outside every
	// session directory; hostSecretData is its random content.
	hostSecret     string
	hostSecretData string
}

// appFileName is the application's fixture file.
const appFileName = "config.py"

// apiKeyVar is the environment variable that carries the fake API key.
const apiKeyVar = "FAKE_API_KEY"

// randomHex returns n random bytes as hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// makeFixtures makes a cell's fixtures in a fresh directory below tempDir.
func makeFixtures(tempDir string) (f *fixtures, err error) {
	root, err := os.MkdirTemp(tempDir, "sandboxlab-attack-")
	if err != nil {
		return nil, fmt.Errorf("making fixture directory: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(root)
		}
	}()
	if err := os.Chmod(root, 0o711); err != nil {
		return nil, fmt.Errorf("making fixture directory: %w", err)
	}
	f = &fixtures{
		root:           root,
		home:           filepath.Join(root, "home"),
		appDir:         filepath.Join(root, "app"),
		keySecret:      randomHex(24),
		apiKey:         "sk-fake-" + randomHex(16),
		hostSecret:     filepath.Join(root, "host-secret.txt"),
		hostSecretData: "host secret " + randomHex(16) + "\n",
		appContent:     "# application settings\nDEBUG = False\n",
	}
	f.sshKey = filepath.Join(f.home, ".ssh", "id_ed25519")
	f.appFile = filepath.Join(f.appDir, appFileName)
	key := "-----BEGIN OPENSSH PRIVATE KEY-----\n" + f.keySecret + "\n-----END OPENSSH PRIVATE KEY-----\n"
	owned := []struct {
		path    string
		dir     bool
		mode    os.FileMode
		content string
	}{
		{f.home, true, 0o755, ""},
		{filepath.Join(f.home, ".ssh"), true, 0o700, ""},
		{f.sshKey, false, 0o600, key},
		{filepath.Join(f.home, ".bashrc"), false, 0o644, "# ~/.bashrc\nexport PS1='$ '\n"},
		{f.appDir, true, 0o755, ""},
		{f.appFile, false, 0o644, f.appContent},
	}
	id := sandbox.HostIdentity()
	for _, o := range owned {
		if o.dir {
			err = os.Mkdir(o.path, o.mode)
		} else {
			err = os.WriteFile(o.path, []byte(o.content), o.mode)
		}
		if err == nil {
			err = os.Chmod(o.path, o.mode) // the umask may have cut it
		}
		if err == nil {
			err = os.Lchown(o.path, id.UID, id.GID)
		}
		if err != nil {
			return nil, fmt.Errorf("making fixture %s: %w", o.path, err)
		}
	}
	if err := os.WriteFile(f.hostSecret, []byte(f.hostSecretData), 0o600); err != nil {
		return nil, fmt.Errorf("making host secret: %w", err)
	}
	if f.homeBefore, err = snapshot(f.home); err != nil {
		return nil, err
	}
	// A copy: the harness's own environment is never changed.
	f.env = append(os.Environ(), apiKeyVar+"="+f.apiKey)
	return f, nil
}

// checkReachable makes sure the program's host identity can pass through
// every directory above the cells' fixtures (tempDir, default
// os.TempDir()). When the harness runs as root, that identity is another
// user, and a TMPDIR under /root (mode 0700) would stop every attack for
// the wrong reason.
func checkReachable(tempDir string) error {
	if !sandbox.HostRoot() {
		return nil // the program runs as the harness's own user
	}
	if tempDir == "" {
		tempDir = os.TempDir()
	}
	dir, err := filepath.Abs(tempDir)
	if err != nil {
		return fmt.Errorf("fixture directory: %w", err)
	}
	for {
		st, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("fixture directory: %w", err)
		}
		if st.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("fixture directory: uid %d cannot pass through %s (mode %v); set TMPDIR to a directory it can reach",
				sandbox.HostIdentity().UID, dir, st.Mode().Perm())
		}
		if dir == "/" {
			return nil
		}
		dir = filepath.Dir(dir)
	}
}

// remove deletes the fixtures and everything the program left among them.
func (f *fixtures) remove() error {
	if err := os.RemoveAll(f.root); err != nil {
		return fmt.Errorf("removing fixtures: %w", err)
	}
	return nil
}

// snapshot maps every entry below dir (links not followed) to its type
// and content, so that any change on the host shows.
func snapshot(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = "file:" + string(b)
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link:" + target
		default:
			out[rel] = d.Type().String()
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	return out, nil
}

// changes lists what differs between two snapshots.
func changes(before, after map[string]string) []string {
	var out []string
	for name, b := range before {
		a, ok := after[name]
		switch {
		case !ok:
			out = append(out, name+" removed")
		case a != b:
			out = append(out, name+" changed")
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			out = append(out, name+" added")
		}
	}
	return out
}

// canaryVar is the variable that holds a canary process's secret.
const canaryVar = "SANDBOXLAB_CANARY"

// canary is a host process outside the sandbox with a secret in its
// environment. It runs as the program's host identity: what may hide it
// is the layer under test, not the uid mapping.
type canary struct {
	cmd    *exec.Cmd
	secret string
}

func startCanary() (*canary, error) {
	c := &canary{secret: "canary-" + randomHex(16)}
	c.cmd = exec.Command("/bin/sleep", "60")
	c.cmd.Env = []string{canaryVar + "=" + c.secret}
	c.cmd.Dir = "/"
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if sandbox.HostRoot() {
		id := sandbox.HostIdentity()
		c.cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(id.UID), Gid: uint32(id.GID), Groups: []uint32{}}
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting canary: %w", err)
	}
	return c, nil
}

// alive reports whether the canary is still running.
func (c *canary) alive() bool {
	p, err := procfs.Stat(c.cmd.Process.Pid)
	return err == nil && p.Alive()
}

// stop kills the canary and reaps it.
func (c *canary) stop() {
	c.cmd.Process.Kill()
	c.cmd.Wait()
}
