package attacks

import (
	"io/fs"
	"path/filepath"
)

var diskFillerSpec = &spec{
	id:          "disk_filler",
	escapes:     "writes a file over 10 MiB",
	firstStop:   1,
	new:         func() attack { return diskFiller{} },
	runsToLimit: true,
	elsewhere:   elsewhere{rootRisk: "it writes 50 MiB in its working directory, wherever the sandbox puts it"},
}

// diskFillerMax is the largest file allowed (the L1 file-size limit).
const diskFillerMax = 10 << 20

type diskFiller struct{}

func (diskFiller) judge(e *env) verdict {
	// The cell's directory holds both places the program may write: the
	// application's directory (L0–L1) and the session's (from L2).
	var biggest string
	var size int64
	filepath.WalkDir(e.fx.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err == nil && info.Size() > size {
			biggest, size = p, info.Size()
		}
		return nil
	})
	rel, _ := filepath.Rel(e.fx.root, biggest)
	if size > diskFillerMax {
		return escaped("%s is %d bytes", rel, size)
	}
	return e.layer(e.policy.Limits.FileSize > 0, "file-size limit", "largest file %s, %d bytes (%s)", rel, size, lastLine(e.res.Stderr))
}
