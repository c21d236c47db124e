package attacks

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/cleanup"
	"sandboxlab/sandbox/evidence"
)

// fixtures are the fakes one cell's attack goes after, made fresh under a
// directory of their own and removed with it. Never real secrets, never
// real host files.
type fixtures struct {
	// root holds everything else (mode 0711: the program's identity may
	// pass through but not list it).
	root string
	// sessions is where the cell's sessions are made, a directory of
	// their own below root, listable as /tmp is (mode 0755, the
	// harness's): at L5 the directory holding a session is covered, so
	// that sibling sessions are out of sight.
	sessions string

	// home is a fake home directory with a fake SSH key and a .bashrc,
	// owned by the program's host identity as a user's home belongs to the
	// user who runs the agent.
	home      string
	sshKey    string // home/.ssh/id_ed25519
	keySecret string // the random part of the key's content

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
func makeFixtures(tempDir string) (*fixtures, error) {
	root, err := evidence.NewFixtureDir(tempDir, "sandboxlab-attack-")
	if err != nil {
		return nil, err
	}
	var undo cleanup.Stack
	defer undo.Clean()
	undo.Add(func() { evidence.RemoveFixtureDir(root) })
	f := &fixtures{
		root:           root,
		sessions:       filepath.Join(root, "sessions"),
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
	err = makeOwned([]ownedFixture{
		{f.home, true, 0o755, ""},
		{filepath.Join(f.home, ".ssh"), true, 0o700, ""},
		{f.sshKey, false, 0o600, key},
		{filepath.Join(f.home, ".bashrc"), false, 0o644, "# ~/.bashrc\nexport PS1='$ '\n"},
		{f.appDir, true, 0o755, ""},
		{f.appFile, false, 0o644, f.appContent},
	})
	if err != nil {
		return nil, err
	}
	err = os.Mkdir(f.sessions, 0o755)
	if err == nil {
		err = os.Chmod(f.sessions, 0o755) // the umask may have cut it
	}
	if err != nil {
		return nil, fmt.Errorf("making the sessions' directory: %w", err)
	}
	if err := os.WriteFile(f.hostSecret, []byte(f.hostSecretData), 0o600); err != nil {
		return nil, fmt.Errorf("making host secret: %w", err)
	}
	// A copy: the harness's own environment is never changed.
	f.env = append(os.Environ(), apiKeyVar+"="+f.apiKey)
	undo.Release() // the fixtures are the caller's to remove
	return f, nil
}

// ownedFixture is a directory or file of the fixtures that belongs to the
// program's host identity.
type ownedFixture struct {
	path    string
	dir     bool
	mode    os.FileMode
	content string
}

// makeOwned makes each of owned, in order, with its exact mode, and hands
// it to the program's host identity.
func makeOwned(owned []ownedFixture) error {
	id := sandbox.HostIdentity()
	for _, o := range owned {
		var err error
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
			return fmt.Errorf("making fixture %s: %w", o.path, err)
		}
	}
	return nil
}

// checkReachable makes sure the program's host identity can pass through
// every directory above the cells' fixtures (tempDir). When the harness runs as root, that identity is another
// user, and a TMPDIR under /root (mode 0700) would stop every attack for
// the wrong reason.
func checkReachable(tempDir string) error {
	if !sandbox.HostRoot() {
		return nil // the program runs as the harness's own user
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
	return evidence.RemoveFixtureDir(f.root)
}
