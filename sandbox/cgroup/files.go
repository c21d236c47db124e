package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// writeFile writes one value to a cgroupfs file in one write(2), as the
// kernel parses each write on its own. It never creates the file: a
// missing interface file means the controller is not there, which must not
// turn into a silent regular file.
func writeFile(dir, name, value string) error {
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("writing %q to %s: %w", value, path, err)
	}
	_, err = f.Write([]byte(value))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %q to %s: %w", value, path, err)
	}
	return nil
}

func exists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

// readInt reads a single-number file; "max" reads as -1.
func readInt(dir, name string) (int64, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return -1, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", filepath.Join(dir, name), err)
	}
	return n, nil
}

// errNoKey says a flat-keyed file lacks the key (an older kernel).
var errNoKey = errors.New("no such key")

// readKey reads one entry of a flat-keyed file ("key value" lines).
func readKey(dir, name, key string) (int64, error) {
	path := filepath.Join(dir, name)
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == key {
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("reading %s in %s: %w", key, path, err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("reading %s in %s: %w", key, path, errNoKey)
}

// readWords reads a space-separated list file (cgroup.controllers,
// cgroup.subtree_control).
func readWords(dir, name string) (map[string]bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	words := map[string]bool{}
	for _, w := range strings.Fields(string(b)) {
		words[w] = true
	}
	return words, nil
}

// readPIDs reads a cgroup.procs file. A group that is gone reads as empty.
func readPIDs(dir string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// writable reports whether dir exists, is a control group (has
// cgroup.procs) and may be written by the caller (making a child in it).
func writable(dir string) bool {
	if dir == "" || !exists(dir, "cgroup.procs") {
		return false
	}
	return unix.Access(dir, unix.W_OK) == nil
}
