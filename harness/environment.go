package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/cgroup"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/landlock"
	"sandboxlab/sandbox/seccomp"
)

// Fingerprint is what of the host and of the build a probe's verdict may
// depend on besides the sources, field by field: a verdict measured under
// one fingerprint is reused only under the same one (see ComputeInputs).
type Fingerprint map[string]string

// unvouched is the field a fingerprint has when the build cannot be
// vouched for (a module replaced by a directory, whose sources no digest
// covers): nothing is reused from or for such a run.
const unvouched = "unvouched"

// HostFingerprint is this host's and this binary's fingerprint: the
// kernel (release and build), the architecture and the CPU count, the
// Landlock ABI, the cgroup layout, the user-namespace switches, the
// harness's uid and the programs', whether the kernel takes 32-bit system
// calls (seccomp.CompatEntry: what decides seccomp_arch_unchecked's
// untestable), the interpreter the programs run (/usr/bin/python3: the
// one peer a mutation run uses), the Go toolchain, and the modules and
// settings of the build. It takes a few milliseconds: one start of the
// interpreter and of the 32-bit probe.
func HostFingerprint() Fingerprint {
	uid := os.Geteuid()
	f := Fingerprint{
		"kernel":          kernel(),
		"arch":            runtime.GOARCH,
		"cpus":            strconv.Itoa(runtime.NumCPU()),
		"landlock_abi":    strconv.Itoa(landlock.ABI()),
		"cgroup":          cgroupLayout(),
		"user_namespaces": userNamespaces(),
		"uid":             strconv.Itoa(uid),
		"program_uid":     strconv.Itoa(sandbox.HostIdentity().UID),
		"compat_entry":    compatEntry(),
		"python":          interpreter(evidence.Python),
		"go":              runtime.Version(),
	}
	build, why := buildFingerprint()
	f["build"] = build
	if why != "" {
		f[unvouched] = why
	}
	return f
}

// kernel is the kernel's release and build (uname -r and -v).
func kernel() string {
	var out []string
	for _, f := range []string{"/proc/sys/kernel/osrelease", "/proc/sys/kernel/version"} {
		b, err := os.ReadFile(f)
		if err != nil {
			return "unknown: " + err.Error()
		}
		out = append(out, strings.TrimSpace(string(b)))
	}
	return strings.Join(out, " ")
}

// cgroupLayout names the controllers of each hierarchy and whether a
// run's group can be made there, without the caller's own group's path
// (which differs from one CI job to the next).
func cgroupLayout() string {
	a, err := cgroup.Available()
	if err != nil {
		return "unknown: " + err.Error()
	}
	usable := func(why string) string {
		if why == "" {
			return "usable"
		}
		return "unusable"
	}
	return fmt.Sprintf("v1 %s: %s; v2 %s: %s", strings.Join(a.Controllers, ","), usable(a.V1),
		strings.Join(a.V2Controllers, ","), usable(a.V2))
}

// userNamespaces reads the switches that decide whether a namespace can
// be made (fail_closed's ground).
func userNamespaces() string {
	var out []string
	for _, name := range []string{"user/max_user_namespaces", "kernel/unprivileged_userns_clone", "kernel/apparmor_restrict_unprivileged_userns"} {
		b, err := os.ReadFile("/proc/sys/" + name)
		if err == nil {
			out = append(out, filepath.Base(name)+"="+strings.TrimSpace(string(b)))
		}
	}
	return strings.Join(out, " ")
}

func compatEntry() string {
	ok, err := seccomp.CompatEntry()
	if err != nil {
		return "unknown: " + err.Error()
	}
	return strconv.FormatBool(ok)
}

// interpreter is the program's version and its file's size and time: a
// distribution's security update keeps the version and changes the file.
func interpreter(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "absent"
	}
	st, err := os.Stat(real)
	if err != nil {
		return "absent"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := exec.CommandContext(ctx, path, "--version").CombinedOutput()
	if err != nil {
		return "unknown: " + err.Error()
	}
	return fmt.Sprintf("%s (%s, %d bytes, %s)", strings.TrimSpace(string(v)), real, st.Size(), st.ModTime().UTC().Format(time.RFC3339))
}

// buildFingerprint digests the build's settings (tags, flags, cgo,
// GOAMD64; not the VCS stamp, which changes with every commit and is
// what the source digests stand in for) and every module linked, by
// version and checksum. A module replaced by a directory has no
// checksum: the second result says so, and then nothing is vouched for.
func buildFingerprint() (digest, unvouchedWhy string) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown", "the binary carries no build information"
	}
	var lines []string
	for _, s := range info.Settings {
		if !strings.HasPrefix(s.Key, "vcs.") {
			lines = append(lines, "setting "+s.Key+"="+s.Value)
		}
	}
	for _, d := range info.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		if m.Sum == "" {
			unvouchedWhy = fmt.Sprintf("module %s is replaced by a directory (%s), whose sources no digest covers", d.Path, m.Path)
		}
		lines = append(lines, "module "+d.Path+" "+m.Path+"@"+m.Version+" "+m.Sum)
	}
	slices.Sort(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return "sha256:" + hex.EncodeToString(sum[:]), unvouchedWhy
}
