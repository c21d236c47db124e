package checks

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

var namesAbsolute = &Check{
	ID:      "names_absolute",
	Promise: "the file API rejects absolute names",
	Level:   2,
	Body: func(t *T) {
		secretPath, secret := t.hostSecret()
		s := t.session(Preset(2), 0)
		b, err := s.ReadFile(secretPath)
		t.Check(err != nil, "ReadFile(%q) succeeded", secretPath)
		t.Check(!strings.Contains(string(b), secret), "ReadFile(%q) handed back the host secret", secretPath)
		planted := filepath.Join(filepath.Dir(secretPath), "planted")
		werr := s.WriteFile(planted, []byte("planted"))
		t.Check(werr != nil, "WriteFile(%q) succeeded", planted)
		_, statErr := os.Stat(planted)
		t.Check(errors.Is(statErr, fs.ErrNotExist), "WriteFile(%q) created the file on the host", planted)
		t.Evidence("ReadFile and WriteFile of absolute names refused: %v", err)
	},
}
