// Package doctor examines what this machine can give the sandbox: the
// kernel features its layers are built on, each level tried for real (a
// run of /bin/true at the level, which says more than any version number),
// and the other sandboxes and tools the harness can use. It changes
// nothing on the machine: a trial run's session directory and control
// group are gone when it returns, as after any run.
//
// It imports the sandbox library, the report model it fills and the
// standard library; 'sandboxlab doctor' renders it.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/report"
	"sandboxlab/sandbox"
	"sandboxlab/sandbox/cgroup"
	"sandboxlab/sandbox/landlock"
	"sandboxlab/sandbox/seccomp"
)

// DefaultLevel is the level 'sandboxlab run' uses when told none.
const DefaultLevel = sandbox.Levels - 1

// Examine examines the machine. It takes well under a second: seven trial
// runs of /bin/true and the tools' --version, all bounded.
func Examine(ctx context.Context) (*report.Doctor, error) {
	d := &report.Doctor{
		Host: report.DoctorHost{Kernel: kernelRelease(), Arch: runtime.GOARCH,
			Identity: report.Identity{UID: os.Geteuid(), Root: sandbox.HostRoot(), ProgramUID: sandbox.HostIdentity().UID}},
		DefaultLevel: DefaultLevel,
	}
	var tools []report.DoctorTool
	var wg sync.WaitGroup
	wg.Go(func() { tools = examineTools(ctx) })
	d.Features = features()
	levels, err := tryLevels(ctx)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	d.Levels, d.Tools = levels, tools
	d.DefaultOK = d.Levels[DefaultLevel].OK
	return d, nil
}

func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}

// features reads what the kernel offers each layer.
func features() []report.DoctorItem {
	return []report.DoctorItem{userNamespaces(), landlockItem(), seccompItem(), cgroupItem()}
}

// sysctl reads a /proc/sys value, "" when the kernel has none.
func sysctl(name string) string {
	b, err := os.ReadFile("/proc/sys/" + strings.ReplaceAll(name, ".", "/"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// userNamespaces reads the three switches that turn them off: the count
// limit everywhere, Debian's unprivileged_userns_clone, and Ubuntu's
// AppArmor restriction (which only binds users without a profile).
func userNamespaces() report.DoctorItem {
	it := report.DoctorItem{Name: "user_namespaces", OK: true}
	var found []string
	max := sysctl("user.max_user_namespaces")
	found = append(found, "user.max_user_namespaces="+orUnset(max))
	if max == "0" {
		it.OK, it.Fix = false, "sysctl -w user.max_user_namespaces=15000"
	}
	if v := sysctl("kernel.unprivileged_userns_clone"); v != "" {
		found = append(found, "kernel.unprivileged_userns_clone="+v)
		if v == "0" && !sandbox.HostRoot() {
			it.OK, it.Fix = false, "sysctl -w kernel.unprivileged_userns_clone=1"
		}
	}
	if v := sysctl("kernel.apparmor_restrict_unprivileged_userns"); v != "" {
		found = append(found, "kernel.apparmor_restrict_unprivileged_userns="+v)
		if v == "1" && !sandbox.HostRoot() {
			it.OK, it.Fix = false, "give sandboxlab an AppArmor profile with 'userns,' or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
		}
	}
	it.Detail = strings.Join(found, ", ")
	return it
}

func orUnset(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}

func landlockItem() report.DoctorItem {
	abi := landlock.ABI()
	if abi < 1 {
		return report.DoctorItem{Name: "landlock", Detail: "not offered by this kernel",
			Fix: "Linux 5.13 or later with landlock in the lsm= boot parameter (L6 needs it)"}
	}
	return report.DoctorItem{Name: "landlock", OK: true, Detail: fmt.Sprintf("ABI %d", abi)}
}

// seccompItem reads whether the kernel filters system calls (a Seccomp
// line in /proc/self/status) and whether it has a 32-bit entry for the
// filter's architecture rule to guard.
func seccompItem() report.DoctorItem {
	b, _ := os.ReadFile("/proc/self/status")
	if !strings.Contains(string(b), "\nSeccomp:") {
		return report.DoctorItem{Name: "seccomp", Detail: "not offered by this kernel",
			Fix: "a kernel built with CONFIG_SECCOMP_FILTER (L6 needs it)"}
	}
	it := report.DoctorItem{Name: "seccomp", OK: true, Detail: "filters"}
	switch ok, err := seccomp.CompatEntry(); {
	case err != nil:
		it.Detail += "; 32-bit entry: " + err.Error()
	case ok:
		it.Detail += "; a 32-bit entry (the filter's architecture rule guards it)"
	default:
		it.Detail += "; no 32-bit entry (the architecture rule guards nothing here; compat_syscall is n/a)"
	}
	return it
}

func cgroupItem() report.DoctorItem {
	it := report.DoctorItem{Name: "cgroups"}
	a, err := cgroup.Available()
	if err != nil {
		it.Detail = err.Error()
		it.Fix = cgroup.Remedy
		return it
	}
	v1 := "v1 " + orNone(a.Controllers) + ": " + orUsable(a.V1)
	v2 := "v2 " + orNone(a.V2Controllers) + ": " + orUsable(a.V2)
	it.OK, it.Detail = a.Usable(), v1+"; "+v2
	if !it.OK {
		it.Fix = cgroup.Remedy + " (L6 needs one)"
	}
	return it
}

func orNone(ss []string) string {
	if len(ss) == 0 {
		return "(none)"
	}
	return strings.Join(ss, ",")
}

func orUsable(why string) string {
	if why == "" {
		return "usable"
	}
	return why
}

// tryLevels runs /bin/true at each level, in a temporary directory it
// removes, one after the other (a level's failure says what the next one
// lacks too).
func tryLevels(ctx context.Context) ([]report.DoctorLevel, error) {
	root, err := os.MkdirTemp("", "sandboxlab-doctor-")
	if err != nil {
		return nil, fmt.Errorf("making the trial runs' directory: %w", err)
	}
	defer os.RemoveAll(root)
	// The program's identity must reach its session directory.
	if err := os.Chmod(root, 0o755); err != nil {
		return nil, fmt.Errorf("opening %s to the program's identity: %w", root, err)
	}
	var out []report.DoctorLevel
	for n := range sandbox.Levels {
		p := sandbox.MustPreset(n)
		l := report.DoctorLevel{Level: n, Name: sandbox.LevelNames[n], Layers: sandbox.LayersOn(p)}
		began := time.Now()
		err := tryLevel(ctx, p, root)
		l.MS = time.Since(began).Milliseconds()
		if err == nil {
			l.OK = true
		} else {
			l.Missing, l.Why, l.Fix = diagnose(p, err)
		}
		if l.Layers == nil {
			l.Layers = []string{}
		}
		out = append(out, l)
	}
	return out, nil
}

// trial is the program each level runs.
const trial = "/bin/true"

func tryLevel(ctx context.Context, p sandbox.Policy, root string) error {
	s, err := sandbox.NewSession(sandbox.Options{Policy: p, Root: root})
	if err != nil {
		return err
	}
	res, err := s.Run(ctx, sandbox.Command{Path: trial, Dir: root})
	if cerr := s.Close(); err == nil && cerr != nil {
		err = cerr
	}
	switch {
	case err != nil:
		return err
	case res.Reason != sandbox.ReasonExited || res.ExitCode != 0:
		return fmt.Errorf("%s ended %s (exit status %d): %s", trial, res.Reason, res.ExitCode, lastLine(res.Stderr+res.Message))
	}
	return nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// diagnose names the first layer of p the machine refused, what was
// refused and the fix, from the run's error. Inside a container the fix
// is the container's flag.
func diagnose(p sandbox.Policy, err error) (layer, why, fix string) {
	why = err.Error()
	text := strings.ToLower(why)
	ctr := container()
	switch {
	case errors.Is(err, cgroup.ErrUnavailable) || strings.Contains(text, "control group"):
		fix = cgroup.Remedy
		if ctr != "" {
			fix = "inside a container (" + ctr + "), bind the host's control groups writable: " +
				"-v /sys/fs/cgroup:/sys/fs/cgroup:rw (cgroup v1), or give it a delegated cgroup v2 subtree"
		}
		return firstOn(p, "cgroup_memory", "cgroup_pids", "cpu_weight"), why, fix
	case strings.Contains(text, "mounting proc"):
		fix = "a /proc of the run's own cannot be mounted while this one has paths covered"
		if ctr != "" {
			fix = "inside a container (" + ctr + ") its /proc has paths masked: run it with --security-opt unmask=/proc/* " +
				"(podman; Docker: --security-opt systempaths=unconfined)"
		}
		return firstOn(p, "pid_namespace"), why, fix
	case strings.Contains(text, "session's filesystem"):
		fix = "mounting the session's filesystem needs CAP_SYS_ADMIN: run as root"
		if ctr != "" {
			fix = "inside a container (" + ctr + ") mounting needs CAP_SYS_ADMIN: run it with --cap-add SYS_ADMIN"
		}
		return firstOn(p, "session_store"), why, fix
	case strings.Contains(text, "landlock"):
		return "landlock", why, "Linux 5.13 or later with landlock in the lsm= boot parameter"
	case strings.Contains(text, "system-call filter") || strings.Contains(text, "seccomp"):
		return "syscall_filter", why, "a kernel built with CONFIG_SECCOMP_FILTER"
	case strings.Contains(text, "namespace"):
		return firstOn(p, "pid_namespace", "network_namespace", "hidden_paths"), why,
			"allow user namespaces: see the user_namespaces feature above"
	}
	return "", why, "see the error; 'sandboxlab run --level N -- /bin/true' shows it in full"
}

// container names the container runtime this process runs in, as the
// runtimes mark it (podman's /run/.containerenv, Docker's /.dockerenv,
// the container variable of PID 1's environment), or "".
func container() string {
	if _, err := os.Stat("/run/.containerenv"); err == nil {
		return "podman"
	}
	if _, err := os.Stat("/.dockerenv"); err == nil {
		return "docker"
	}
	env, err := os.ReadFile("/proc/1/environ")
	if err != nil {
		return ""
	}
	for _, kv := range strings.Split(string(env), "\x00") {
		if v, ok := strings.CutPrefix(kv, "container="); ok && v != "" {
			return v
		}
	}
	return ""
}

// firstOn returns the first of names that p has.
func firstOn(p sandbox.Policy, names ...string) string {
	on := sandbox.LayersOn(p)
	for _, n := range names {
		for _, o := range on {
			if o == n {
				return n
			}
		}
	}
	return names[0]
}

// tool is one program the harness may use, and how to ask its version.
type tool struct {
	name, binary string
	args         []string
	purpose      string
	// note says what else it needs, when the binary is found ("" fine).
	note func() string
}

var tools = []tool{
	{"python3", "/usr/bin/python3", []string{"--version"}, "the attack programs and the checks (Debian's, never a shim under /root)", nil},
	{"bubblewrap", "bwrap", []string{"--version"}, "attack --sandbox bubblewrap, bubblewrap-codex", nil},
	{"firejail", "firejail", []string{"--version"}, "attack --sandbox firejail", nil},
	{"runsc", "runsc", []string{"--version"}, "attack --sandbox gvisor", nil},
	{"podman", "podman", []string{"--version"}, "attack --sandbox podman, podman-rootless", nil},
	{"runc", "runc", []string{"--version"}, "attack --sandbox runc", nil},
	{"qemu", "qemu-system-x86_64", []string{"--version"}, "attack --sandbox qemu (a virtual machine)", kernelImage},
	{"unshare", "unshare", []string{"--version"}, "attack --sandbox unshare", nil},
	{"node", "node", []string{"--version"}, "the MCP tests' TypeScript client", nil},
	{"gcc", "gcc", []string{"--version"}, "the compatibility suite's C workload", nil},
}

// kernelImage says whether a kernel for the virtual machine is readable.
func kernelImage() string {
	m, _ := filepath.Glob("/boot/vmlinuz-*")
	for _, k := range m {
		if f, err := os.Open(k); err == nil {
			f.Close()
			return "guest kernel " + k
		}
	}
	return "no readable /boot/vmlinuz-* for the guest (Debian's linux-image-amd64)"
}

// examineTools asks each tool its version at once, each bounded.
func examineTools(ctx context.Context) []report.DoctorTool {
	out := make([]report.DoctorTool, len(tools))
	var wg sync.WaitGroup
	for i, t := range tools {
		wg.Go(func() { out[i] = examineTool(ctx, t) })
	}
	wg.Wait()
	return out
}

func examineTool(ctx context.Context, t tool) report.DoctorTool {
	r := report.DoctorTool{Name: t.name, For: t.purpose}
	path, err := exec.LookPath(t.binary)
	if err != nil {
		return r
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, t.args...)
	cmd.WaitDelay = time.Second
	b, err := cmd.CombinedOutput()
	r.Path = path
	if err != nil {
		r.Note = fmt.Sprintf("%s %s failed: %v", path, strings.Join(t.args, " "), err)
		return r
	}
	r.Found, r.Version = true, firstLine(string(b))
	if t.note != nil {
		r.Note = t.note()
	}
	return r
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
