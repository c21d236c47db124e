package checks

import (
	_ "embed" // the program's source
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

//go:embed programs/read_identity.py
var readIdentity string

var noHostIdentity = &Check{
	ID:      "no_host_identity",
	Suite:   verdict.Hardening,
	Promise: "at L6 the program reads none of the host's identity: its host name, boot id, kernel command line, file locks, control groups, uptime or boot time",
	Level:   6,
	Body: func(t *T) {
		// The host holds a lock of its own, so that the kernel's list of
		// locks has at least one entry that is the host's.
		f, err := os.CreateTemp(t.Root(), "held-*.lock")
		t.NilError(err)
		defer f.Close()
		t.NilError(unix.Flock(int(f.Fd()), unix.LOCK_SH))
		st, err := f.Stat()
		t.NilError(err)
		lockInode := ":" + strconv.FormatUint(st.Sys().(*syscall.Stat_t).Ino, 10) + " "
		host := hostIdentity(t)
		t.Assert(strings.Contains(host["locks"], lockInode), "the host's /proc/locks does not list its own lock on inode %s: %q", lockInode, host["locks"])

		res := t.runPython(Preset(6), sandbox.Command{}, readIdentity)
		seen := identityLines(res.Stdout)
		t.Assert(seen["done"] == "", "the program did not read everything: stdout %q, stderr %s", res.Stdout, lastLine(res.Stderr))
		t.Check(seen["nodename"] != host["nodename"], "the program's host name is the host's, %q", host["nodename"])
		t.Check(!strings.Contains(seen["boot_id"], host["boot_id"]), "the program read the host's boot id %s", host["boot_id"])
		t.Check(host["cmdline"] == "" || !strings.Contains(seen["cmdline"], host["cmdline"]),
			"the program read the host's kernel command line %q", host["cmdline"])
		t.Check(!strings.Contains(seen["locks"]+" ", lockInode), "the program's /proc/locks lists the host's lock on inode %s: %q", strings.Trim(lockInode, ": "), seen["locks"])
		// In a cgroup namespace of its own, the program's groups are the
		// namespace's root in every hierarchy.
		for _, line := range strings.Split(seen["cgroup"], " | ") {
			f := strings.SplitN(line, ":", 3) // ID:CONTROLLERS:PATH
			t.Check(len(f) == 3 && f[2] == "/", "the program's /proc/self/cgroup names a group below the host's: %q", line)
		}
		// The host has been up for longer than the run: a program on its
		// own clocks reads less, and a boot time other than the host's.
		hostUp, _ := strconv.ParseFloat(host["uptime"], 64)
		up, err := strconv.ParseFloat(seen["uptime"], 64)
		t.Check(err == nil && (hostUp < 5 || up < hostUp-2), "the program's /proc/uptime is %q, the host's %s s", seen["uptime"], host["uptime"])
		t.Check(seen["btime"] != "" && seen["btime"] != host["btime"], "the program's /proc/stat gives the host's boot time %q", seen["btime"])
		t.Evidence("the host is %q, boot %s, up %s s since %s, and holds a lock on inode %s; the program read host name %q, boot id %q, command line %q, locks %q, control groups %q, up %s s since %s",
			host["nodename"], host["boot_id"], host["uptime"], host["btime"], strings.Trim(lockInode, ": "), seen["nodename"], seen["boot_id"], seen["cmdline"], seen["locks"], seen["cgroup"], seen["uptime"], seen["btime"])
	},
}

// hostIdentity reads on the host what read_identity.py reads in the run.
func hostIdentity(t *T) map[string]string {
	t.Helper()
	name, err := os.Hostname()
	t.NilError(err)
	out := map[string]string{"nodename": name}
	for key, path := range map[string]string{"boot_id": "/proc/sys/kernel/random/boot_id", "cmdline": "/proc/cmdline", "locks": "/proc/locks"} {
		b, err := os.ReadFile(path)
		t.NilError(err)
		out[key] = strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", " | ")
	}
	t.Assert(out["boot_id"] != "", "the host has no boot id to compare")
	up, err := os.ReadFile("/proc/uptime")
	t.NilError(err)
	out["uptime"], _, _ = strings.Cut(string(up), " ")
	stat, err := os.ReadFile("/proc/stat")
	t.NilError(err)
	for _, line := range strings.Split(string(stat), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			out["btime"] = v
		}
	}
	t.Assert(out["btime"] != "", "the host's /proc/stat has no boot time to compare")
	return out
}

// identityLines splits read_identity.py's output into its named values;
// "done" is there, empty, when the program got to the end.
func identityLines(stdout string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(stdout, "\n") {
		if line == "done" {
			out["done"] = ""
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			out[k] = v
		}
	}
	if _, ok := out["done"]; !ok {
		out["done"] = "missing"
	}
	return out
}
