package backends

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"sandboxlab/attacks/backends/guest"
)

// guestModules are the kernel modules the guest's init needs, with what
// they depend on: the virtio PCI transport and 9p over it.
var guestModules = []string{"virtio_pci", "9pnet_virtio", "9p"}

// moduleFiles returns the files of names and of every module they depend
// on, in an order they can load in (each after what it needs), read from
// dir's modules.dep. A module built into the kernel (modules.builtin)
// needs no file.
func moduleFiles(dir string, names []string) ([]string, error) {
	deps, err := readModulesDep(filepath.Join(dir, "modules.dep"))
	if err != nil {
		return nil, err
	}
	builtin, _ := os.ReadFile(filepath.Join(dir, "modules.builtin"))
	byName := map[string]string{}
	for file := range deps {
		byName[moduleName(file)] = file
	}
	var order []string
	var visit func(file string)
	visit = func(file string) {
		if slices.Contains(order, file) {
			return
		}
		for _, d := range deps[file] {
			visit(d)
		}
		order = append(order, file)
	}
	for _, n := range names {
		file, ok := byName[n]
		switch {
		case ok:
			visit(file)
		case bytes.Contains(builtin, []byte("/"+n+".ko\n")):
			// built in
		default:
			return nil, fmt.Errorf("kernel module %s: not in %s", n, dir)
		}
	}
	return order, nil
}

// readModulesDep reads modules.dep: each module's file and the files of
// the modules it depends on.
func readModulesDep(p string) (map[string][]string, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("reading the kernel's modules: %w", err)
	}
	defer f.Close()
	deps := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		file, rest, ok := strings.Cut(sc.Text(), ":")
		if ok {
			deps[file] = strings.Fields(rest)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	return deps, nil
}

// moduleName is a module's name from its file (kernel/fs/9p/9p.ko → 9p).
func moduleName(file string) string {
	base := path.Base(file)
	return base[:strings.Index(base, ".ko")]
}

// buildInitrd writes the guest's initrd to dst: an uncompressed cpio
// archive (newc) with the init (self: this binary, and the dynamic loader
// and libraries it needs if it is not static), the modules from modDir
// and what they need, in their load order, a console device and the
// init's mount points.
func buildInitrd(dst, self, modDir string, modules []string) error {
	mods, err := moduleFiles(modDir, modules)
	if err != nil {
		return err
	}
	libs, err := elfDeps(self)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("writing the initrd: %w", err)
	}
	w := &cpioWriter{w: bufio.NewWriterSize(f, 1<<20)}
	for _, d := range []string{"dev", "proc", "sys", "job", "prog", strings.TrimPrefix(guest.ModulesDir, "/")} {
		w.entry(d, dirMode|0o755, [2]int{}, nil)
	}
	w.entry("dev/console", charMode|0o600, devNum(5, 1), nil)
	var order []string
	for _, m := range mods {
		base := path.Base(m)
		order = append(order, base)
		w.file(path.Join(guest.ModulesDir[1:], base), 0o644, filepath.Join(modDir, m))
	}
	w.entry(path.Join(guest.ModulesDir[1:], guest.ModuleOrder), fileMode|0o644, [2]int{}, []byte(strings.Join(order, "\n")+"\n"))
	for _, l := range libs {
		var parents []string // the kernel makes no missing parent
		for d := path.Dir(l); d != "/"; d = path.Dir(d) {
			parents = append([]string{d[1:]}, parents...)
		}
		for _, d := range parents {
			w.dirOnce(d)
		}
		w.file(l[1:], 0o755, l)
	}
	w.file(guest.InitPath[1:], 0o755, self)
	w.entry("TRAILER!!!", 0, [2]int{}, nil)
	err = w.err
	if err == nil {
		err = w.w.(*bufio.Writer).Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing the initrd %s: %w", dst, err)
	}
	return nil
}

// elfDeps returns the dynamic loader and the libraries the executable
// exe needs, as absolute paths of the host's (none for a static one).
func elfDeps(exe string) ([]string, error) {
	f, err := elf.Open(exe)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", exe, err)
	}
	defer f.Close()
	var out []string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b, err := io.ReadAll(p.Open())
			if err != nil {
				return nil, fmt.Errorf("reading %s's loader: %w", exe, err)
			}
			out = append(out, strings.TrimRight(string(b), "\x00"))
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	needed, err := f.ImportedLibraries()
	if err != nil {
		return nil, fmt.Errorf("reading %s's libraries: %w", exe, err)
	}
	for _, lib := range needed {
		found := ""
		for _, dir := range []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"} {
			if _, err := os.Stat(filepath.Join(dir, lib)); err == nil {
				found = filepath.Join(dir, lib)
				break
			}
		}
		if found == "" {
			return nil, fmt.Errorf("%s needs %s, which is not on this host", exe, lib)
		}
		out = append(out, found)
	}
	return out, nil
}

// extractVmlinux writes the uncompressed kernel inside the bzImage at
// vmlinuz to dst (an xz stream, as Debian compresses it, through xz):
// QEMU boots it through its PVH entry, without the guest decompressing
// itself on an emulated CPU (5.7 s against 12.4 s to a first program
// under TCG here).
func extractVmlinux(vmlinuz, dst string) error {
	b, err := os.ReadFile(vmlinuz)
	if err != nil {
		return fmt.Errorf("reading the kernel: %w", err)
	}
	at := bytes.Index(b, []byte("\xfd7zXZ\x00"))
	if at < 0 {
		return errors.New("no xz stream in " + vmlinuz)
	}
	xz, err := exec.LookPath("xz")
	if err != nil {
		return fmt.Errorf("extracting vmlinux: %w", err)
	}
	cmd := exec.Command(xz, "--decompress", "--stdout", "--single-stream")
	cmd.Stdin = bytes.NewReader(b[at:])
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("extracting vmlinux from %s: %w", vmlinuz, err)
	}
	if !bytes.HasPrefix(out, []byte("\x7fELF")) {
		return errors.New("extracting vmlinux from " + vmlinuz + ": not an ELF image")
	}
	return os.WriteFile(dst, out, 0o644)
}

// cpio (newc) modes and device numbers.
const (
	dirMode  = 0o040000
	fileMode = 0o100000
	charMode = 0o020000
)

func devNum(major, minor int) [2]int { return [2]int{major, minor} }

// cpioWriter writes a newc cpio archive; the first error sticks.
type cpioWriter struct {
	w    io.Writer
	ino  int
	n    int64
	dirs []string
	err  error
}

// entry writes one member: its header, name and data, each padded to 4
// bytes.
func (c *cpioWriter) entry(name string, mode int, rdev [2]int, data []byte) {
	if c.err != nil {
		return
	}
	c.ino++
	nlink := 1
	if mode&dirMode != 0 {
		nlink = 2
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rdev[0], rdev[1], len(name)+1, 0)
	c.write([]byte(hdr + name + "\x00"))
	c.pad()
	c.write(data)
	c.pad()
}

// file writes the host file src as name.
func (c *cpioWriter) file(name string, perm int, src string) {
	if c.err != nil {
		return
	}
	b, err := os.ReadFile(src)
	if err != nil {
		c.err = err
		return
	}
	c.entry(name, fileMode|perm, [2]int{}, b)
}

// dirOnce writes a directory member unless it has been written.
func (c *cpioWriter) dirOnce(name string) {
	if !slices.Contains(c.dirs, name) {
		c.dirs = append(c.dirs, name)
		c.entry(name, dirMode|0o755, [2]int{}, nil)
	}
}

func (c *cpioWriter) write(b []byte) {
	if c.err == nil {
		var n int
		n, c.err = c.w.Write(b)
		c.n += int64(n)
	}
}

func (c *cpioWriter) pad() {
	if r := c.n % 4; r != 0 {
		c.write(make([]byte, 4-r))
	}
}
