package sandbox

import (
	"bytes"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// FuzzFileNames feeds the file API names of every shape and checks that
// nothing it reads or writes lands outside the session directory: a read
// never returns the host secret next to the session, a write changes
// nothing outside, and whatever a write creates is the file its cleaned
// name points at, below the session directory.
//
//	go test -run '^$' -fuzz FuzzFileNames -fuzztime 3m ./sandbox
func FuzzFileNames(f *testing.F) {
	for _, seed := range []string{
		"ok.txt", "./ok.txt", "dir/x", "dir/../ok.txt", "a/../../outside/secret.txt", "../outside/secret.txt",
		"/etc/passwd", "//etc/passwd", "link/secret.txt", "link", "dirlink/x", "..", ".", "", "a\x00b",
		"dir/./../../outside", "dir//x", "dir/", "new/deep/er/x", strings.Repeat("a/", 50) + "x",
	} {
		f.Add(seed)
	}
	parent := f.TempDir()
	outside := filepath.Join(parent, "outside")
	secret := []byte("host secret " + parent)
	must(f, os.Mkdir(outside, 0o755))
	must(f, os.WriteFile(filepath.Join(outside, "secret.txt"), secret, 0o600))
	s, err := NewSession(Options{Policy: MustPreset(0), Root: parent, Quota: -1})
	must(f, err)
	f.Cleanup(func() { s.Close() })
	dir := s.Dir()
	must(f, os.WriteFile(filepath.Join(dir, "ok.txt"), []byte("inside"), 0o644))
	must(f, os.Mkdir(filepath.Join(dir, "dir"), 0o755))
	must(f, os.Symlink(outside, filepath.Join(dir, "link")))
	must(f, os.Symlink("dir", filepath.Join(dir, "dirlink")))
	before := snapshot(f, parent, dir)

	f.Fuzz(func(t *testing.T, name string) {
		if b, err := s.ReadFile(name); err == nil && bytes.Contains(b, secret) {
			t.Fatalf("ReadFile(%q) returned the host secret", name)
		}
		marker := []byte("fuzz " + name)
		if err := s.WriteFile(name, marker); err == nil {
			clean := path.Clean(name)
			if strings.HasPrefix(name, "/") || clean == ".." || strings.HasPrefix(clean, "../") {
				t.Fatalf("WriteFile(%q) accepted a name that leaves the directory", name)
			}
			got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(clean)))
			if err != nil || !bytes.Equal(got, marker) {
				t.Fatalf("WriteFile(%q) did not land on %s below the session (%v)", name, clean, err)
			}
			os.Remove(filepath.Join(dir, filepath.FromSlash(clean)))
		}
		if after := snapshot(t, parent, dir); after != before {
			t.Fatalf("after %q the tree outside the session changed:\nbefore %s\nafter  %s", name, before, after)
		}
		// Directories the write made stay; they are inside by the check above.
	})
}

// snapshot describes everything below parent except the session directory.
func snapshot(t testing.TB, parent, skip string) string {
	var lines []string
	filepath.WalkDir(parent, func(p string, d os.DirEntry, err error) error {
		if p == skip {
			return filepath.SkipDir
		}
		if err != nil {
			lines = append(lines, p+" error "+err.Error())
			return nil
		}
		line := p + " " + d.Type().String()
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			line += " " + string(b)
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
