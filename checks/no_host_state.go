package checks

import (
	"crypto/rand"
	"encoding/binary"
	"strconv"
	"strings"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/verdict"
)

var noHostState = &Check{
	ID:      "no_host_state",
	Suite:   verdict.Hardening,
	Promise: "nothing a run writes outside its session directory, and no IPC object it makes, is left on the host",
	Level:   5,
	Untimed: true,
	Body: func(t *T) {
		tok := t.tagged()
		var b [4]byte
		rand.Read(b[:])
		key := int32(binary.LittleEndian.Uint32(b[:])&0x3fffffff) + 1
		// Whatever the program leaves is tagged, found and removed.
		t.Cleanup(func() { evidence.RemoveHostTraces(evidence.FindHostTraces(tok, key), tok, key) })
		args := append([]string{tok, strconv.Itoa(int(key))}, evidence.ScratchRoots...)
		res := t.runPython(Preset(5, notTimed), sandbox.Command{}, leaveTraces, args...)
		inside := strings.ReplaceAll(strings.TrimSpace(res.Stdout), "\n", "; ")
		// The check means something only if the program did leave things
		// where it ran: files in the scratch directories, every IPC kind.
		t.Check(strings.Contains(res.Stdout, "/tmp") && strings.Contains(res.Stdout, "made: shm msg sem mq"),
			"the program could not leave its traces even inside the sandbox: %s %s", inside, lastLine(res.Stderr))
		left := evidence.FindHostTraces(tok, key)
		t.Check(len(left.Files) == 0, "files it wrote are on the host: %s", strings.Join(left.Files, ", "))
		t.Check(len(left.SysV) == 0, "System V objects it made are on the host: %s", strings.Join(left.SysV, ", "))
		t.Check(!left.Queue, "its POSIX message queue is on the host")
		t.Evidence("the host shows none of it; inside it %s", inside)
	},
}

// leaveTraces leaves a file named with its tag in every world-writable
// directory below the roots it is given and makes one object of each IPC
// kind with its key (argv: tag, key, roots...).
const leaveTraces = `
import ctypes, os, stat, sys
tag, key, roots = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
wrote = []
for root in roots:
    base = root.count("/")
    for d, subdirs, _ in os.walk(root):
        if d.count("/") - base >= 3:
            subdirs[:] = []
            continue
        try:
            if os.lstat(d).st_mode & stat.S_IWOTH:
                open(os.path.join(d, "left-" + tag), "w").write(tag)
                wrote.append(d)
        except OSError:
            pass
libc = ctypes.CDLL(None, use_errno=True)
made = [n for n, ok in (("shm", libc.shmget(key, 4096, 0o1600)), ("msg", libc.msgget(key, 0o1600)),
        ("sem", libc.semget(key, 1, 0o1600)), ("mq", libc.mq_open(("/" + tag).encode(), os.O_CREAT | os.O_RDWR, 0o600, None)))
        if ok >= 0]
print("wrote in", " ".join(wrote))
print("made:", " ".join(made))
`

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
