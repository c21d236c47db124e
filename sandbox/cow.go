package sandbox

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// After a fork.
//
// Go starts a child in a new user namespace with a full fork, not a
// vfork (the parent must write the child's ID maps while the child
// waits, and a vfork would stop the parent). The fork marks every page
// of this process copy-on-write, and each stays write-protected after the
// child has exec'd: the first write to each afterwards is a fault. A
// caller that ran something after a pre-started init had been made paid
// for that in its next call (measured on a 2-core VM: 70 to 90 more page
// faults, 1 to 2 ms, on an MCP ping).
//
// breakCopyOnWrite takes those faults at once, while the session waits:
// for every page of a private writable mapping that is present,
// MADV_POPULATE_WRITE (Linux 5.14) maps it writable again, as a write
// would, without changing it. The child has exec'd by then, so the pages
// are this process's alone and nothing is copied. Pages not present are
// left alone (populating them would add memory the process never used),
// and so is everything where the kernel cannot (an older kernel, a
// /proc without pagemap): the cost then stays where it was.
func breakCopyOnWrite() {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return
	}
	defer pm.Close()
	page := uintptr(os.Getpagesize())
	var entries []byte
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		start, end, ok := privateWritable(sc.Bytes())
		if !ok {
			continue
		}
		n := int((end - start) / page)
		entries = append(entries[:0], make([]byte, 8*n)...)
		if _, err := pm.ReadAt(entries, int64(start/page)*8); err != nil {
			continue
		}
		// Runs of present pages, each in one call.
		run := -1
		for i := 0; i <= n; i++ {
			present := i < n && binary.LittleEndian.Uint64(entries[8*i:])&pagePresent != 0
			switch {
			case present && run < 0:
				run = i
			case !present && run >= 0:
				if !populateWrite(start+uintptr(run)*page, uintptr(i-run)*page) {
					return // not on this kernel, or not here: leave the rest
				}
				run = -1
			}
		}
	}
}

// populateWrite maps the n bytes at addr writable, as a write to each
// page would. The range is given by number: it is not Go memory this
// code reads or writes, only the kernel's page tables.
func populateWrite(addr, n uintptr) bool {
	_, _, errno := unix.Syscall(unix.SYS_MADVISE, addr, n, unix.MADV_POPULATE_WRITE)
	return errno == 0
}

// pagePresent is a /proc/PID/pagemap entry's "page present" bit.
const pagePresent = 1 << 63

// privateWritable parses a line of /proc/self/maps and reports the range
// of a private, writable mapping.
func privateWritable(line []byte) (start, end uintptr, ok bool) {
	f := bytes.Fields(line)
	if len(f) < 2 || string(f[1][:min(len(f[1]), 4)]) != "rw-p" {
		return 0, 0, false
	}
	lo, hi, found := bytes.Cut(f[0], []byte("-"))
	if !found {
		return 0, 0, false
	}
	s, err1 := strconv.ParseUint(string(lo), 16, 64)
	e, err2 := strconv.ParseUint(string(hi), 16, 64)
	if err1 != nil || err2 != nil || e <= s {
		return 0, 0, false
	}
	return uintptr(s), uintptr(e), true
}
