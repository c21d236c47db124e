//go:build !nomutants

package mutants

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// Coverage: the harness's baseline asks, for every probe (a check, an
// attack cell), which planted sites its run reaches; a defect then runs
// only the probes that reach its site. A site is reached when On(id) is
// asked, in any process the probe involves: the harness's worker, which
// records in memory, and the processes it starts (the sandbox's init, a
// check's helper), which inherit a descriptor and write each id they ask
// there, once, as one line.

// maxDefects bounds the registry; a larger one is a programming error
// that TestCoverIndexFits catches.
const maxDefects = 128

// covering and coverFD are set once at start-up, before any site is
// asked (as the active defect is), so On reads them without a lock.
var (
	covering bool // On records what it is asked
	coverFD  = -1 // where a child process writes what it is asked

	coverMu sync.Mutex
	asked   [maxDefects]bool // by registry index: asked in this process
)

// Cover starts recording, in this process, which sites are asked. It is
// called once at start-up, before any site is asked. fd is the
// descriptor a child process (the init, a helper) inherited from the
// recording process, to write each site it asks to, once, as its id and
// a newline; -1 in the recording process itself, which makes that file
// for the processes it starts (ChildFile) and reads it back (Reached).
func Cover(fd int) error {
	if fd < 0 {
		tmp, err := os.CreateTemp("", "sandboxlab-cover-")
		if err != nil {
			return fmt.Errorf("recording coverage: %w", err)
		}
		os.Remove(tmp.Name()) // the descriptors are all anyone needs
		// Appends of one short line are atomic among the processes
		// sharing the file.
		f, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", tmp.Fd()), os.O_RDWR|os.O_APPEND, 0)
		tmp.Close()
		if err != nil {
			return fmt.Errorf("recording coverage: %w", err)
		}
		root, shared, fd = f, f, int(f.Fd())
	} else {
		shared = os.NewFile(uintptr(fd), "sandboxlab-cover")
	}
	covering, coverFD = true, fd
	return nil
}

// root is the file the recording process reads its children's sites
// back from (nil in a child); shared is the file the processes started
// from here inherit (root, or the one this child inherited).
var root, shared *os.File

// Covering reports whether this process records the sites asked.
func Covering() bool { return covering }

// ChildFile returns the file a process started from here inherits to
// write the sites it asks to (pass it on with Cover in the child), or nil
// when coverage is not recorded.
func ChildFile() *os.File {
	return shared
}

// Reached returns the defects whose sites this process, or a process
// started from it that inherited ChildFile, asked since Cover was called,
// in registry order.
func Reached() ([]ID, error) {
	coverMu.Lock()
	seen := asked
	coverMu.Unlock()
	if root != nil {
		b, err := io.ReadAll(io.NewSectionReader(root, 0, 1<<20))
		if err != nil {
			return nil, fmt.Errorf("reading the sites children reached: %w", err)
		}
		for _, line := range strings.Fields(string(b)) {
			i := index(ID(line))
			if i < 0 {
				return nil, fmt.Errorf("a child reported reaching %q, no planted site", line)
			}
			seen[i] = true
		}
	}
	var out []ID
	for i, a := range seen[:len(All)] {
		if a {
			out = append(out, All[i].ID)
		}
	}
	return out, nil
}

// record notes that the site of id was asked. It neither allocates nor
// takes long: the init calls On with its resource limits about to be set,
// and output sites call it for every chunk.
func record(id ID) {
	coverMu.Lock()
	defer coverMu.Unlock()
	i := index(id)
	if i < 0 || asked[i] {
		return
	}
	asked[i] = true
	if coverFD < 0 {
		return
	}
	var line [64]byte
	n := copy(line[:len(line)-1], unsafe.Slice(unsafe.StringData(string(id)), len(id)))
	line[n] = '\n'
	// One write of a short line: atomic among the writers sharing fd.
	syscall.Write(coverFD, line[:n+1])
}

// index is id's position in All, or -1.
func index(id ID) int {
	for i := range All {
		if All[i].ID == id {
			return i
		}
	}
	return -1
}
