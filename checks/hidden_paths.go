package checks

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"sandboxlab/sandbox"
)

var hiddenPaths = &Check{
	ID:      "hidden_paths",
	Promise: "chosen paths are hidden, and writes into them never reach the host",
	Level:   5,
	Body: func(t *T) {
		home := t.ownedDir("home")
		secret := token()
		key := filepath.Join(home, "id_ed25519")
		t.ownedFile(key, secret)
		conf := filepath.Join(t.ownedDir("etc"), "app.conf")
		t.ownedFile(conf, "password="+secret)
		p := Preset(5)
		p.Filesystem.Hide = append(p.Filesystem.Hide, home, conf)
		res := t.runPython(p, sandbox.Command{}, `
import os, sys
home, key, conf = sys.argv[1], sys.argv[2], sys.argv[3]
for path in (key, conf):
    try:
        print(open(path).read())
    except OSError as e:
        print(e)
try:
    print(os.listdir(home))
    open(os.path.join(home, "planted"), "w").write("x")
    open(conf, "w").write("overwritten")
except OSError as e:
    print(e)
`, home, key, conf)
		t.Check(!strings.Contains(res.Stdout, secret), "the program read a hidden secret")
		_, err := os.Stat(filepath.Join(home, "planted"))
		t.Check(errors.Is(err, fs.ErrNotExist), "a file written into the hidden directory reached the host")
		b, err := os.ReadFile(conf)
		t.NilError(err)
		t.Check(string(b) == "password="+secret, "the hidden file changed on the host")
		t.Evidence("the hidden directory looked empty and the hidden file empty; the host's copies are unchanged")
	},
}
