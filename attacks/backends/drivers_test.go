package backends

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/attacks/backends/guest"
)

// TestGuestShares: the shipped qemu profile's shares become the guest's
// mounts at the host paths they share; a command that would let a
// guest's root write host files as root, or that does not share the job
// directory, is refused.
func TestGuestShares(t *testing.T) {
	cmd := shipped(t, "qemu").Expand(Vars{Workdir: "/w", Job: "/j"})
	mounts, err := guestShares(cmd, "/j", true)
	assert.NilError(t, err)
	assert.DeepEqual(t, mounts, []guest.Mount{{Tag: "usr", Path: "/usr", ReadOnly: true}, {Tag: "etc", Path: "/etc", ReadOnly: true}, {Tag: "work", Path: "/w"}})

	dev := func(id, tag string) []string {
		return []string{"-device", "virtio-9p-pci,fsdev=" + id + ",mount_tag=" + tag}
	}
	job := slices.Concat([]string{"-fsdev", "local,id=job,path=/j,security_model=mapped-xattr"}, dev("job", guest.JobTag))
	for _, tc := range []struct {
		name   string
		cmd    []string
		asRoot bool
		want   string
	}{
		{"writable none as root", slices.Concat(job, []string{"-fsdev", "local,id=w,path=/w,security_model=none"}, dev("w", "work")), true, "writable with security_model=none while QEMU runs as root"},
		{"no job share", []string{"-fsdev", "local,id=w,path=/w,security_model=mapped-xattr", "-device", "virtio-9p-pci,fsdev=w,mount_tag=work"}, false, "does not share the job directory"},
		{"a read-only job share", slices.Concat([]string{"-fsdev", "local,id=job,path=/j,security_model=none,readonly=on"}, dev("job", guest.JobTag)), true, "does not share the job directory"},
		{"no fsdev", slices.Concat(job, dev("nope", "x")), false, "no -fsdev with id nope"},
	} {
		_, err := guestShares(tc.cmd, "/j", tc.asRoot)
		assert.Check(t, is.ErrorContains(err, tc.want), tc.name)
	}
	_, err = guestShares(slices.Concat(job, []string{"-fsdev", "local,id=w,path=/w,security_model=none"}, dev("w", "work")), "/j", false)
	assert.Check(t, err, "an emulator that is not root may share with security_model=none")
}

// fakeModules writes a modules directory: a needs b and c, b needs c,
// and virtio_pci is built in.
func fakeModules(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "modules.dep"), []byte("kernel/x/a.ko: kernel/y/b.ko kernel/c.ko\nkernel/y/b.ko: kernel/c.ko\nkernel/c.ko:\nkernel/z/d.ko:\n"), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "modules.builtin"), []byte("kernel/drivers/virtio/virtio_pci.ko\n"), 0o644))
	for _, m := range []string{"kernel/x/a.ko", "kernel/y/b.ko", "kernel/c.ko"} {
		assert.NilError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(m)), 0o755))
		assert.NilError(t, os.WriteFile(filepath.Join(dir, m), []byte("module "+m), 0o644))
	}
	return dir
}

func TestModuleFiles(t *testing.T) {
	dir := fakeModules(t)
	order, err := moduleFiles(dir, []string{"virtio_pci", "a", "b"})
	assert.NilError(t, err)
	assert.DeepEqual(t, order, []string{"kernel/c.ko", "kernel/y/b.ko", "kernel/x/a.ko"})
	_, err = moduleFiles(dir, []string{"9p"})
	assert.Check(t, is.ErrorContains(err, "kernel module 9p: not in"))
	if _, err := os.Stat(filepath.Join(modulesRoot)); err == nil {
		if v, _, err := guestKernel(); err == nil {
			mods, err := moduleFiles(filepath.Join(modulesRoot, v), guestModules)
			assert.NilError(t, err, "Debian's kernel %s", v)
			assert.Check(t, strings.HasSuffix(mods[len(mods)-1], "/9p.ko"), "%v", mods)
		}
	}
}

// TestInitrd writes an initrd and reads it back with cpio(1): every
// member is there, each directory before what it holds, the modules'
// order as written, the init's bytes intact, and the loader and
// libraries of a dynamic init with it.
func TestInitrd(t *testing.T) {
	cpio, err := exec.LookPath("cpio")
	if err != nil {
		t.Skip("needs cpio(1) to read the archive back")
	}
	self := "/usr/bin/true" // dynamic on Debian: the loader and libc come along
	libs, err := elfDeps(self)
	assert.NilError(t, err)
	dst := filepath.Join(t.TempDir(), "initrd.cpio")
	assert.NilError(t, buildInitrd(dst, self, fakeModules(t), []string{"a"}))
	out := t.TempDir()
	cmd := exec.Command(cpio, "-idm", "--quiet", "--no-absolute-filenames")
	cmd.Dir = out
	f, err := os.Open(dst)
	assert.NilError(t, err)
	defer f.Close()
	cmd.Stdin = f
	msg, err := cmd.CombinedOutput()
	assert.NilError(t, err, string(msg))
	order, err := os.ReadFile(filepath.Join(out, "modules", "order"))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(string(order), "c.ko\nb.ko\na.ko\n"))
	want, _ := os.ReadFile(self)
	got, err := os.ReadFile(filepath.Join(out, guest.InitPath))
	assert.NilError(t, err)
	assert.Check(t, bytes.Equal(got, want), "the init's bytes")
	st, err := os.Stat(filepath.Join(out, "dev", "console"))
	if err == nil { // cpio makes device nodes only as root
		assert.Check(t, st.Mode()&os.ModeCharDevice != 0)
	}
	assert.Check(t, len(libs) >= 2, "%v: the loader and libc", libs)
	for _, l := range libs {
		_, err := os.Stat(filepath.Join(out, l))
		assert.Check(t, err, l)
	}
}

func TestGuestKernelChoice(t *testing.T) {
	found := []string{"6.1.0-9-amd64", "6.10.0-1-amd64", "6.1.0-57-amd64", "5.10.0-30-amd64"}
	slices.SortFunc(found, compareVersions)
	assert.DeepEqual(t, found, []string{"5.10.0-30-amd64", "6.1.0-9-amd64", "6.1.0-57-amd64", "6.10.0-1-amd64"})

	boot, mods := t.TempDir(), t.TempDir()
	defer func(b, m string) { bootDir, modulesRoot = b, m }(bootDir, modulesRoot)
	bootDir, modulesRoot = boot, mods
	_, _, err := guestKernel()
	assert.Check(t, is.ErrorContains(err, "linux-image-amd64"))
	// A kernel whose modules are missing is not used.
	assert.NilError(t, os.WriteFile(filepath.Join(boot, "vmlinuz-6.2.0-1-amd64"), nil, 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(boot, "vmlinuz-6.1.0-1-amd64"), nil, 0o644))
	assert.NilError(t, os.MkdirAll(filepath.Join(mods, "6.1.0-1-amd64"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(mods, "6.1.0-1-amd64", "modules.dep"), nil, 0o644))
	v, img, err := guestKernel()
	assert.NilError(t, err)
	assert.Check(t, is.Equal(v, "6.1.0-1-amd64"))
	assert.Check(t, is.Equal(img, filepath.Join(boot, "vmlinuz-6.1.0-1-amd64")))
}

// TestNoKernelIsANamedSkip: without Debian's kernel the qemu column is
// skipped, saying what is missing; nothing is made.
func TestNoKernelIsANamedSkip(t *testing.T) {
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 is not installed: the column is skipped before the kernel is looked for")
	}
	defer func(b, m string) { bootDir, modulesRoot = b, m }(bootDir, modulesRoot)
	bootDir, modulesRoot = t.TempDir(), t.TempDir()
	tmp := t.TempDir()
	c, skip, err := OpenColumn(shipped(t, "qemu"), ColumnOptions{Program: Identity{UID: 65534, GID: 65534}, Root: true, TempDir: tmp})
	assert.NilError(t, err)
	assert.Check(t, c == nil)
	assert.Check(t, is.Contains(skip, "no guest kernel"))
	left, _ := os.ReadDir(tmp)
	assert.Check(t, is.Len(left, 0))
}

func TestContainerUser(t *testing.T) {
	for _, tc := range []struct {
		cmd  []string
		want Identity
	}{
		{[]string{"podman", "run", "--user", "65534:65534"}, Identity{65534, 65534}},
		{[]string{"podman", "run", "--user=1000"}, Identity{1000, 1000}},
		{[]string{"podman", "run", "-u", "7:8"}, Identity{7, 8}},
		{[]string{"podman", "run"}, Identity{}},
	} {
		got, err := containerUser(tc.cmd)
		assert.NilError(t, err)
		assert.Check(t, is.Equal(got, tc.want), "%v", tc.cmd)
	}
	_, err := containerUser([]string{"podman", "--user", "nobody"})
	assert.Check(t, is.ErrorContains(err, "numeric"))
}

func TestSubordinate(t *testing.T) {
	f := filepath.Join(t.TempDir(), "subuid")
	assert.NilError(t, os.WriteFile(f, []byte("other:100000:65536\nsbxlab-1:165536:65536\n1003:231072:10\n"), 0o644))
	got, err := subordinate(f, "sbxlab-1", 1002, 65534)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(got, 165536+65533), "container uid 65534 is the 65534th subordinate id")
	got, err = subordinate(f, "x", 1002, 0)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(got, 1002), "container root is the user")
	got, err = subordinate(f, "nobody-by-name", 1003, 5)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(got, 231076), "a range found by uid")
	_, err = subordinate(f, "nobody-by-name", 1003, 65534)
	assert.Check(t, is.ErrorContains(err, "no range of nobody-by-name's holds id 65534"))
}

// TestRuncSpec: the harness's changes to runc's default spec.
func TestRuncSpec(t *testing.T) {
	s := map[string]any{
		"process": map[string]any{"terminal": true, "user": map[string]any{"uid": 0, "gid": 0},
			"capabilities": map[string]any{"bounding": []any{"CAP_KILL"}}, "noNewPrivileges": true},
		"root":   map[string]any{"path": "rootfs", "readonly": true},
		"mounts": []any{map[string]any{"destination": "/proc", "type": "proc", "source": "proc"}},
		"linux":  map[string]any{"namespaces": []any{map[string]any{"type": "pid"}, map[string]any{"type": "mount"}}},
	}
	runcSpec(s, []string{"/usr/bin/python3", "-c", "pass"}, "/w", Identity{65534, 65534}, "/sandboxlab-x")
	proc := s["process"].(map[string]any)
	assert.Check(t, is.Equal(proc["terminal"], false))
	assert.Check(t, is.Equal(proc["cwd"], "/w"))
	assert.Check(t, is.Equal(proc["noNewPrivileges"], true), "kept as shipped")
	assert.DeepEqual(t, proc["user"], map[string]any{"uid": 65534, "gid": 65534, "additionalGids": []int{}})
	for _, set := range []string{"bounding", "effective", "permitted", "ambient"} {
		assert.Check(t, is.Len(proc["capabilities"].(map[string]any)[set], 0), set)
	}
	ns := s["linux"].(map[string]any)["namespaces"].([]any)
	assert.Check(t, is.Len(ns, 3))
	assert.Check(t, is.Equal(ns[2].(map[string]any)["type"], "network"), "a network namespace added")
	assert.Check(t, is.Equal(s["linux"].(map[string]any)["cgroupsPath"], "/sandboxlab-x"))
	mounts := s["mounts"].([]any)
	assert.Check(t, is.Len(mounts, 5))
	var dests []string
	for _, m := range mounts {
		dests = append(dests, m.(map[string]any)["destination"].(string))
	}
	assert.DeepEqual(t, dests, []string{"/proc", "/usr", "/etc", "/w", "/tmp"})
	assert.DeepEqual(t, mounts[1].(map[string]any)["options"], []string{"rbind", "ro", "nosuid", "nodev"})
	assert.DeepEqual(t, mounts[3].(map[string]any)["options"], []string{"rbind", "rw", "nosuid", "nodev"})
}

func TestUnescapeMount(t *testing.T) {
	assert.Check(t, is.Equal(unescapeMount(`/a\040b/c`), "/a b/c"))
	assert.Check(t, is.Equal(unescapeMount(`/plain`), "/plain"))
}
