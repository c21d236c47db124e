package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"sandboxlab/sandbox/procfs"
)

// A session's owner is recorded next to its directory, in
// <dir>.owner, where the program cannot reach it: "pid start" of the
// process whose session it is, or "kept" for a session that outlives its
// maker ('sandboxlab session new') until it is removed on purpose. When
// the owner is gone without closing its session (killed, say), the
// janitor removes the directory: "the session ended" is not guaranteed.
const (
	ownerSuffix = ".owner"
	ownerKept   = "kept"
)

// writeOwner records who owns the session directory dir.
func writeOwner(dir string, kept bool) error {
	rec := ownerKept
	if !kept {
		me, err := procfs.Stat(os.Getpid())
		if err != nil {
			return fmt.Errorf("reading this process's start time: %w", err)
		}
		rec = fmt.Sprintf("%d %d", me.PID, me.Start)
	}
	if err := os.WriteFile(dir+ownerSuffix, []byte(rec+"\n"), 0o644); err != nil {
		return fmt.Errorf("recording the session's owner: %w", err)
	}
	return nil
}

// ownerGone reports whether the owner recorded for dir has ended. It is
// false for a kept session, and an error when dir's record is not one
// this package wrote.
func ownerGone(dir string) (bool, error) {
	rec := dir + ownerSuffix
	st, err := os.Lstat(rec)
	if err != nil {
		return false, err
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	if !st.Mode().IsRegular() || sys == nil || int(sys.Uid) != os.Geteuid() || st.Size() > 64 {
		return false, fmt.Errorf("%s: not an owner record of this user's", rec)
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		return false, err
	}
	f := strings.Fields(string(b))
	if len(f) == 1 && f[0] == ownerKept {
		return false, nil
	}
	if len(f) != 2 {
		return false, fmt.Errorf("%s: malformed owner record", rec)
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return false, fmt.Errorf("%s: malformed owner record", rec)
	}
	return procfs.Ended(pid, start), nil
}

// CollectGarbage removes the session directories in root (default
// os.TempDir()) whose owner has ended without closing them, with their
// owner records, and returns the directories removed. It touches only
// directories named like sessions, owned by the program's identity, with
// an owner record this user wrote: never one whose owner lives, never one
// this package did not make.
func CollectGarbage(root string) ([]string, error) {
	if root == "" {
		root = os.TempDir()
	}
	collected.Store(root, true) // the first session made there needs no sweep of its own
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("collecting stale sessions in %s: %w", root, err)
	}
	id := HostIdentity()
	var removed []string
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, sessionPrefix) || strings.HasSuffix(name, ownerSuffix) {
			continue
		}
		dir := filepath.Join(root, name)
		st, err := os.Lstat(dir)
		if err != nil {
			continue
		}
		sys, _ := st.Sys().(*syscall.Stat_t)
		if !st.IsDir() || sys == nil || int(sys.Uid) != id.UID {
			continue
		}
		gone, err := ownerGone(dir)
		if err != nil || !gone {
			continue // not ours to judge, or alive
		}
		if err := removeTree(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.Remove(dir + ownerSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}

// collected remembers the roots this process has swept, so that each is
// swept once, when its first session is made.
var collected sync.Map

// collectOnce sweeps root once per process, quietly: a stale session
// that cannot be removed now is tried again by the next process.
func collectOnce(root string) {
	if _, done := collected.LoadOrStore(root, true); !done {
		CollectGarbage(root)
	}
}
