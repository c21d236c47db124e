package checks

import (
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/tool"
	"sandboxlab/verdict"
)

var diskCappedInRun = &Check{
	ID:      "disk_capped_in_run",
	Suite:   verdict.Hardening,
	Promise: "one run cannot fill the session directory past its quota or its inode cap: the write fails in that run, which ends with the disk reason",
	Level:   6,
	Body: func(t *T) {
		const quota, inodes = 8 << 20, 500
		// Writing is not timed here: the clock must not stop the run first.
		p := Preset(6, TimeLimits(20*time.Second), func(p *sandbox.Policy) { p.Hardened.SessionInodes = inodes })
		s := t.session(p, quota)
		careful := tool.NewCareful(s)
		// 24 MiB in files of 1 MiB (below the 10 MiB file-size limit), then
		// 1,500 empty files: three times each cap.
		bytesReply, err := careful.Call(t.Context(), "for i in range(24):\n    open('big%d' % i, 'wb').write(b'x' * (1 << 20))\nprint('wrote 24 MiB')")
		t.NilError(err)
		used, _ := treeUsage(t, s.Dir())
		t.Check(used <= quota, "one run wrote %d bytes into a session whose quota is %d", used, quota)
		t.Check(bytesReply.Status.Reason == string(sandbox.ReasonDisk), "the run that hit the quota ended %s, not disk", bytesReply.Status.Reason)
		t.Check(strings.Contains(bytesReply.Text, "disk full"), "the careful tool does not say disk full: %s", lastLine(bytesReply.Text))
		filesReply, err := careful.Call(t.Context(), "import os\nfor f in os.listdir('.'):\n    os.remove(f)\nfor i in range(1500):\n    open('e%d' % i, 'w').close()\nprint('made 1500 files')")
		t.NilError(err)
		_, files := treeUsage(t, s.Dir())
		t.Check(files < inodes, "one run made %d files in a session whose inode cap is %d", files, inodes)
		t.Check(filesReply.Status.Reason == string(sandbox.ReasonDisk), "the run that hit the inode cap ended %s, not disk", filesReply.Status.Reason)
		t.Evidence("at most %d bytes and %d files of a %d-byte, %d-inode cap; the runs ended %s and %s: %q",
			used, files, quota, inodes, bytesReply.Status.Reason, filesReply.Status.Reason, bytesReply.Status.Message)
	},
}

// treeUsage returns the bytes allocated below dir and how many entries
// it holds, as the host counts them.
func treeUsage(t *T, dir string) (bytes int64, entries int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			bytes += st.Blocks * 512
		}
		if path != dir {
			entries++
		}
		return nil
	})
	t.NilError(err)
	return bytes, entries
}
