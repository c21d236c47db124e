package backends

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/sandbox/procfs"
)

// The container drivers: podman (root and rootless) and runc. Each run
// gets a root directory of its own (makeRootfs), a state directory for
// the runtime, and a name; after the run the container, its processes,
// its control groups and its mounts are removed, whatever state the run
// ended in.

// teardownLimit bounds each step of removing a container.
const teardownLimit = 30 * time.Second

// makeRootfs makes a container's root directory in dir, owned by owner:
// the mount points a runtime mounts on, and Debian's merged-/usr links.
// What an image would hold of its own is the host's /usr and /etc, which
// the profiles bind read-only; no other file of the host's is in it.
func makeRootfs(dir string, owner Identity) error {
	if err := mkdirOwned(dir, 0o755, owner); err != nil {
		return fmt.Errorf("making the container's root: %w", err)
	}
	for _, d := range []string{"proc", "sys", "dev", "tmp", "run", "usr", "etc"} {
		if err := mkdirOwned(filepath.Join(dir, d), 0o755, owner); err != nil {
			return fmt.Errorf("making the container's root: %w", err)
		}
	}
	for _, l := range []string{"bin", "lib", "lib64", "sbin"} {
		p := filepath.Join(dir, l)
		if err := os.Symlink("usr/"+l, p); err != nil {
			return fmt.Errorf("making the container's root: %w", err)
		}
		if err := os.Lchown(p, owner.UID, owner.GID); err != nil {
			return fmt.Errorf("making the container's root: %w", err)
		}
	}
	return nil
}

// statePrefix begins the name of a run's podman state directory; its
// maker's procfs.Owner follows.
const statePrefix = "sbxlab-"

// sweepStates removes the state directories of runs whose harness ended
// without removing them (killed mid-run), with the processes that name
// them (conmon) and what is mounted below them.
func sweepStates() {
	for _, dir := range procfs.Orphaned(stateRoot(), statePrefix) {
		procfs.KillWithArgPrefix(dir, teardownLimit)
		unmountBelow(dir)
		os.RemoveAll(dir)
	}
}

// stateRoot is where a run's podman state goes: /run, where runtimes
// keep their state, for root; the temporary directory otherwise.
func stateRoot() string {
	if os.Geteuid() == 0 {
		return "/run"
	}
	return os.TempDir()
}

// containerName is the name of a run's container.
func containerName(token string) string { return "sandboxlab-" + token }

// openPodman readies a podman column: rootful as the harness (root), or
// rootless as a throw-away user; the program's host identity is the
// --user of the command, mapped through the user's subordinate ids when
// rootless.
func (c *Column) openPodman(o ColumnOptions) (string, error) {
	c.Detached = true
	sweepStates()
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return "", fmt.Errorf("reading the open-files limit: %w", err)
	}
	c.vars.Nofile = strconv.FormatUint(lim.Max, 10)
	inside, err := containerUser(c.Profile.Command)
	if err != nil {
		return "", err
	}
	if c.Profile.Starter() == UserThrowaway {
		if _, err := exec.LookPath("newuidmap"); err != nil {
			return "rootless podman needs newuidmap and newgidmap (Debian's uidmap): " + err.Error(), nil
		}
		if skip, err := c.openThrowaway(o); skip != "" || err != nil {
			return skip, err
		}
		if c.Program, err = mapped(c.Starter, inside); err != nil {
			return err.Error(), nil
		}
		return "", nil
	}
	if !o.Root {
		return "rootful podman " + errNotRoot.Error() + " (podman-rootless runs it as a user)", nil
	}
	c.Program = inside
	c.undo.Add(libpodParentsCleanup())
	return "", nil
}

// containerUser reads --user UID[:GID] (or -u) from a podman command: the
// program's identity inside the container (0:0 without one).
func containerUser(cmd []string) (Identity, error) {
	val := ""
	for i, a := range cmd {
		switch {
		case (a == "--user" || a == "-u") && i+1 < len(cmd):
			val = cmd[i+1]
		case strings.HasPrefix(a, "--user="):
			val = strings.TrimPrefix(a, "--user=")
		}
	}
	if val == "" {
		return Identity{}, nil
	}
	u, g, hasG := strings.Cut(val, ":")
	uid, err := strconv.Atoi(u)
	gid := uid
	if err == nil && hasG {
		gid, err = strconv.Atoi(g)
	}
	if err != nil {
		return Identity{}, fmt.Errorf("podman --user %q: want a numeric UID[:GID], so that the harness knows who owns the program's files", val)
	}
	return Identity{UID: uid, GID: gid}, nil
}

// libpodParentsCleanup notes which of podman's parent control groups
// (libpod_parent, with conmon's below it) exist before the column, and
// returns the step that removes those the column's runs made, once empty.
func libpodParentsCleanup() func() {
	parents, _ := filepath.Glob("/sys/fs/cgroup/*/libpod_parent")
	return func() {
		now, _ := filepath.Glob("/sys/fs/cgroup/*/libpod_parent")
		for _, p := range now {
			if !slices.Contains(parents, p) {
				unix.Rmdir(filepath.Join(p, "conmon"))
				unix.Rmdir(p)
			}
		}
	}
}

// preparePodman makes the run's root and state directories (and, for a
// rootless run, the user's home and runtime directory inside the state),
// and sets up the container's removal.
func (c *Column) preparePodman(in *Instance, v *Vars, r RunSpec) error {
	if err := os.Chmod(r.Scratch, 0o711); err != nil {
		return err
	}
	v.Rootfs, v.Name = filepath.Join(r.Scratch, "root"), containerName(r.Token)
	if err := makeRootfs(v.Rootfs, c.Starter); err != nil {
		return err
	}
	// podman refuses a runroot longer than 50 characters: the state goes
	// in a short directory of its own, where runtimes keep theirs.
	state, err := os.MkdirTemp(stateRoot(), statePrefix+procfs.Owner()+"-")
	if err != nil {
		return fmt.Errorf("making podman's state directory: %w", err)
	}
	v.State = state
	in.undo.AddErr(func() error { return os.RemoveAll(state) })
	if err := mkdirOwned(v.State, 0o700, c.Starter); err != nil {
		return fmt.Errorf("making podman's state directory: %w", err)
	}
	env := slices.Clone(r.Env)
	if c.Profile.Starter() == UserThrowaway {
		home, xdg := filepath.Join(v.State, "home"), filepath.Join(v.State, "xdg")
		for _, d := range []string{home, xdg} {
			if err := mkdirOwned(d, 0o700, c.Starter); err != nil {
				return fmt.Errorf("making podman's directories: %w", err)
			}
		}
		env = append(env, "HOME="+home, "XDG_RUNTIME_DIR="+xdg)
	}
	in.Launch.Env = env
	in.Launch.Argv = c.argv(*v, r.Program)
	global := in.Launch.Argv[:slices.Index(in.Launch.Argv, "run")]
	name, scratch := v.Name, r.Scratch
	in.undo.Add(func() { unmountBelow(scratch); unmountBelow(state) })
	rootless := c.Profile.Starter() == UserThrowaway
	in.undo.AddErr(func() error {
		var err error
		left, _ := filepath.Glob(filepath.Join(state, "*", "*-containers", "*", "userdata"))
		if len(left) > 0 && !rootless {
			// The run ended before podman removed its container: its
			// control groups and its /dev/shm mount are the host's. A
			// rootless container has neither (no control group on cgroup
			// v1, mounts in its own namespace); its processes were in the
			// run's group, and its pause process is gone with them.
			err = c.runtime(env, slices.Concat(global, []string{"rm", "--force", "--time", "0", "--ignore", name}))
		}
		// conmon, podman's clean-up command and the rootless pause
		// process name the state directory on their command lines.
		procfs.KillWithArgPrefix(state, teardownLimit)
		return err
	})
	return nil
}

// runtime runs a command of the container runtime's as the column's
// starter, for a teardown.
func (c *Column) runtime(env, argv []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), teardownLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.Cred, Setsid: true}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// openRunc readies a runc column: root only (a rootless spec is another
// set-up); the program runs as sandboxlab's program identity.
func (c *Column) openRunc(o ColumnOptions) (string, error) {
	if !o.Root {
		return "runc as shipped " + errNotRoot.Error() + " (its rootless spec is another set-up)", nil
	}
	c.Program = o.Program
	return "", nil
}

// prepareRunc writes the run's bundle: runc's own default spec (runc
// spec) with the program, its identity and working directory, no
// capabilities, a network namespace, the root directory, /usr and /etc
// bound read-only, the working directory bound writable, a tmpfs /tmp,
// and a control group of the container's own outside the harness's run
// group (runc removes it with the container).
func (c *Column) prepareRunc(in *Instance, v *Vars, r RunSpec) error {
	v.Bundle, v.State, v.Name = filepath.Join(r.Scratch, "bundle"), filepath.Join(r.Scratch, "state"), containerName(r.Token)
	if err := os.Mkdir(v.Bundle, 0o700); err != nil {
		return fmt.Errorf("making the bundle: %w", err)
	}
	if out, err := exec.Command(c.Path, "spec", "--bundle", v.Bundle).CombinedOutput(); err != nil {
		return fmt.Errorf("runc spec: %w: %s", err, out)
	}
	if err := makeRootfs(filepath.Join(v.Bundle, "rootfs"), Identity{}); err != nil {
		return err
	}
	cgroup := "/" + v.Name
	if err := editSpec(filepath.Join(v.Bundle, "config.json"), func(s map[string]any) {
		runcSpec(s, r.Program, r.Workdir, c.Program, cgroup)
	}); err != nil {
		return err
	}
	in.Launch.Argv = c.argv(*v, nil)
	global := in.Launch.Argv[:slices.Index(in.Launch.Argv, "run")]
	name, scratch := v.Name, r.Scratch
	in.undo.Add(func() { unmountBelow(scratch) })
	in.undo.AddErr(func() error {
		var err error
		if exists(filepath.Join(v.State, name)) {
			err = c.runtime(r.Env, slices.Concat(global, []string{"delete", "--force", name}))
		}
		groups, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", cgroup))
		for _, g := range groups {
			if rerr := unix.Rmdir(g); rerr != nil && !errors.Is(rerr, unix.ENOENT) {
				err = errors.Join(err, fmt.Errorf("removing the container's control group %s: %w", g, rerr))
			}
		}
		return err
	})
	return nil
}

// runcSpec changes runc's default spec s for one run.
func runcSpec(s map[string]any, program []string, workdir string, id Identity, cgroup string) {
	proc := object(s, "process")
	proc["terminal"] = false
	proc["args"] = program
	proc["cwd"] = workdir
	proc["user"] = map[string]any{"uid": id.UID, "gid": id.GID, "additionalGids": []int{}}
	proc["capabilities"] = map[string]any{"bounding": []string{}, "effective": []string{}, "permitted": []string{}, "ambient": []string{}}
	s["root"] = map[string]any{"path": "rootfs", "readonly": true}
	mounts, _ := s["mounts"].([]any)
	bind := func(src, dst, mode string) map[string]any {
		return map[string]any{"destination": dst, "type": "bind", "source": src, "options": []string{"rbind", mode, "nosuid", "nodev"}}
	}
	s["mounts"] = append(mounts, bind("/usr", "/usr", "ro"), bind("/etc", "/etc", "ro"), bind(workdir, workdir, "rw"),
		map[string]any{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": []string{"nosuid", "nodev", "mode=1777", "size=65536k"}})
	linux := object(s, "linux")
	ns, _ := linux["namespaces"].([]any)
	if !slices.ContainsFunc(ns, func(n any) bool { m, _ := n.(map[string]any); return m["type"] == "network" }) {
		linux["namespaces"] = append(ns, map[string]any{"type": "network"})
	}
	linux["cgroupsPath"] = cgroup
}

// object returns s[key] as an object, made if missing.
func object(s map[string]any, key string) map[string]any {
	m, ok := s[key].(map[string]any)
	if !ok {
		m = map[string]any{}
		s[key] = m
	}
	return m
}

// editSpec reads the JSON file p, changes it with edit and writes it back.
func editSpec(p string, edit func(map[string]any)) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("reading the spec: %w", err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("reading the spec %s: %w", p, err)
	}
	edit(s)
	if b, err = json.MarshalIndent(s, "", "\t"); err != nil {
		return fmt.Errorf("writing the spec: %w", err)
	}
	return os.WriteFile(p, b, 0o600)
}

// unmountBelow detaches every mount at or below dir (deepest first): what
// a runtime killed mid-run leaves mounted (podman's /dev/shm for the
// container).
func unmountBelow(dir string) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		if p := unescapeMount(f[4]); p == dir || strings.HasPrefix(p, dir+"/") {
			points = append(points, p)
		}
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	for _, p := range points {
		unix.Unmount(p, unix.MNT_DETACH)
	}
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				out.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		out.WriteByte(s[i])
	}
	return out.String()
}
