package checks

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

var namesTraversal = &Check{
	ID:      "names_traversal",
	Promise: "the file API rejects names with '..' that leave the directory",
	Level:   2,
	Body: func(t *T) {
		secretPath, secret := t.hostSecret()
		s := t.session(Preset(2), 0)
		rel, err := filepath.Rel(s.Dir(), secretPath)
		t.NilError(err)
		for _, name := range []string{rel, "a/../" + rel, "./" + rel} {
			b, err := s.ReadFile(name)
			t.Check(err != nil, "ReadFile(%q) succeeded", name)
			t.Check(!strings.Contains(string(b), secret), "ReadFile(%q) handed back the host secret", name)
		}
		planted := filepath.Join(filepath.Dir(secretPath), "planted")
		relPlanted, _ := filepath.Rel(s.Dir(), planted)
		err = s.WriteFile(relPlanted, []byte("planted"))
		t.Check(err != nil, "WriteFile(%q) succeeded", relPlanted)
		_, statErr := os.Stat(planted)
		t.Check(errors.Is(statErr, fs.ErrNotExist), "WriteFile(%q) created a file outside the session", relPlanted)
		b, _ := os.ReadFile(secretPath)
		t.Check(string(b) == secret, "the host secret changed")
		t.Evidence("ReadFile(%q) and WriteFile outside refused: %v", rel, err)
	},
}
