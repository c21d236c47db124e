package attacks

import (
	"crypto/rand"
	"encoding/binary"
	"strconv"
	"strings"

	"sandboxlab/sandbox/evidence"
)

var leaveHostStateSpec = &spec{
	id:        "leave_host_state",
	escapes:   "a file it wrote in a world-writable directory, or a System V or POSIX IPC object it made, is on the host after the run",
	firstStop: 5,
	new:       func() attack { return &leaveHostState{} },
	elsewhere: elsewhere{rootRisk: "it writes in every world-writable directory of the host"},
}

// leaveHostState's program tags what it leaves with the cell's token
// (files, the POSIX queue) and key (System V objects), so that the host
// finds exactly that, and removes it.
type leaveHostState struct {
	key int32
}

func (l *leaveHostState) setup(e *env) error {
	var b [4]byte
	rand.Read(b[:])
	l.key = int32(binary.LittleEndian.Uint32(b[:])&0x3fffffff) + 1
	e.onCleanup(func() {
		evidence.RemoveHostTraces(evidence.FindHostTraces(e.token, l.key), e.token, l.key)
	})
	return nil
}

func (l *leaveHostState) args(*env) []string {
	return append([]string{strconv.Itoa(int(l.key))}, evidence.ScratchRoots...)
}

func (l *leaveHostState) judge(e *env) verdict {
	t := evidence.FindHostTraces(e.token, l.key)
	if !t.Empty() {
		var left []string
		if len(t.Files) > 0 {
			left = append(left, "files in "+strings.Join(dirsOf(t.Files), ", "))
		}
		if len(t.SysV) > 0 {
			left = append(left, "System V "+strings.Join(t.SysV, ", "))
		}
		if t.Queue {
			left = append(left, "a POSIX message queue")
		}
		return escaped("on the host after the run: %s", strings.Join(left, "; "))
	}
	seen := "the host shows nothing of it; inside: " + strings.ReplaceAll(strings.TrimSpace(e.res.Stdout), "\n", "; ")
	return e.programLayer(e.iso.private("/tmp") && e.iso.ownIPC, "private scratch directories, IPC namespace", "%s", seen)
}

// dirsOf lists the directories of paths.
func dirsOf(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = p[:strings.LastIndexByte(p, '/')]
	}
	return out
}
