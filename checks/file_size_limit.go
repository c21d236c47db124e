package checks

import (
	"os"
	"path/filepath"

	"sandboxlab/sandbox"
)

var fileSizeLimit = &Check{
	ID:      "file_size_limit",
	Promise: "writing past 10 MB fails",
	Level:   1,
	Body: func(t *T) {
		p := Preset(1)
		app := t.ownedDir("app")
		t.runPython(p, sandbox.Command{Dir: app}, `
chunk = b"x" * (1 << 20)
with open("big.bin", "wb") as f:
    for i in range(11):
        f.write(chunk)
`)
		st, err := os.Stat(filepath.Join(app, "big.bin"))
		t.NilError(err, "the program wrote no file at all")
		t.Check(st.Size() <= p.Limits.FileSize, "the file on the host is %d bytes; the limit is %d", st.Size(), p.Limits.FileSize)
		t.Check(st.Size() > 0, "nothing was written")
		t.Evidence("an 11 MiB write left a %d-byte file (limit %d)", st.Size(), p.Limits.FileSize)
	},
}
