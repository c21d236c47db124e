package backends

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"sandboxlab/attacks/backends/guest"
)

// The qemu driver: a virtual machine per run. The column finds Debian's
// kernel (/boot/vmlinuz-<version> and /lib/modules/<version>), extracts
// vmlinux from it and builds an initrd (this binary as the guest's init,
// the 9p and virtio modules); each run gets a job directory, shared with
// the guest, holding the program's argv and, once it has run, its
// output and how it ended (see package guest).

// The accelerators, as -accel and the CPU model with each.
const (
	accelKVM = "kvm"
	accelTCG = "tcg"
	cpuHost  = "host"
	cpuMax   = "max"
)

// kvmDevice is KVM's device.
const kvmDevice = "/dev/kvm"

// bootDir and modulesRoot are where Debian's kernel packages put the
// kernel images and their modules.
var (
	bootDir     = "/boot"
	modulesRoot = "/lib/modules"
)

// vmColumn is what a qemu column shares across runs.
type vmColumn struct {
	version string // the guest kernel's
	accel   string
	// accelWhy says why the column uses its accelerator.
	accelWhy string
}

// guestKernel finds the newest kernel in bootDir whose modules are in
// modulesRoot, and returns its version and image.
func guestKernel() (version, image string, err error) {
	images, _ := filepath.Glob(filepath.Join(bootDir, "vmlinuz-*"))
	var found []string
	for _, img := range images {
		v := strings.TrimPrefix(filepath.Base(img), "vmlinuz-")
		if _, err := os.Stat(filepath.Join(modulesRoot, v, "modules.dep")); err == nil {
			found = append(found, v)
		}
	}
	if len(found) == 0 {
		return "", "", fmt.Errorf("no guest kernel: no %s/vmlinuz-<version> with %s/<version>/modules.dep (Debian's linux-image-amd64 installs both)", bootDir, modulesRoot)
	}
	slices.SortFunc(found, compareVersions)
	version = found[len(found)-1]
	return version, filepath.Join(bootDir, "vmlinuz-"+version), nil
}

// compareVersions orders kernel versions, numbers by value.
func compareVersions(a, b string) int {
	split := func(s string) []string {
		return strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == '-' || r == '+' })
	}
	pa, pb := split(a), split(b)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		na, ea := strconv.Atoi(pa[i])
		nb, eb := strconv.Atoi(pb[i])
		switch {
		case ea == nil && eb == nil && na != nb:
			return na - nb
		case (ea != nil || eb != nil) && pa[i] != pb[i]:
			return strings.Compare(pa[i], pb[i])
		}
	}
	return len(pa) - len(pb)
}

// openQEMU readies a qemu column: the guest's kernel and initrd in a
// directory of the column's, and the accelerator. Without a guest kernel
// the column is skipped.
func (c *Column) openQEMU(o ColumnOptions) (string, error) {
	c.Guest = true
	if c.Program.UID == 0 {
		return "the guest's program would run as root: give the qemu profile user: program", nil
	}
	version, image, err := guestKernel()
	if err != nil {
		return err.Error(), nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding this binary, the guest's init: %w", err)
	}
	dir, err := os.MkdirTemp(o.TempDir, "sandboxlab-vm-")
	if err != nil {
		return "", fmt.Errorf("making the guest's directory: %w", err)
	}
	c.undo.Add(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // the emulator reads it as the program's identity
		return "", fmt.Errorf("making the guest's directory: %w", err)
	}
	c.vars.Kernel = filepath.Join(dir, "vmlinux")
	kernelNote := "Debian's kernel " + version + ", vmlinux extracted"
	if err := extractVmlinux(image, c.vars.Kernel); err != nil {
		c.vars.Kernel, kernelNote = image, "Debian's kernel "+version+" as packaged ("+err.Error()+")"
	}
	c.vars.Initrd = filepath.Join(dir, "initrd.cpio")
	if err := buildInitrd(c.vars.Initrd, self, filepath.Join(modulesRoot, version), guestModules); err != nil {
		return "", err
	}
	c.vm = &vmColumn{version: version, accel: accelKVM}
	if st, err := os.Stat(kvmDevice); err != nil {
		c.vm.accel, c.vm.accelWhy = accelTCG, kvmDevice+" is absent"
	} else if sys, ok := st.Sys().(*syscall.Stat_t); ok && c.Cred != nil {
		// The unprivileged emulator opens KVM as a member of the
		// device's group (kvm), as a user allowed to run VMs is.
		c.Cred.Groups = []uint32{sys.Gid}
	}
	c.setAccel(kernelNote)
	return "", nil
}

// setAccel fills in the accelerator's placeholders and the column's notes.
func (c *Column) setAccel(kernelNote string) {
	v := c.vm
	c.vars.Accel, c.vars.CPU = v.accel, cpuHost
	accel := "KVM"
	if v.accel == accelTCG {
		c.vars.CPU, accel = cpuMax, "TCG, an emulated CPU, no hardware isolation of the guest's memory"
	}
	if v.accelWhy != "" {
		accel += " (" + v.accelWhy + ")"
	}
	c.GuestLimits = guestLimits(c.Profile.Command)
	c.Notes = []string{"accelerator: " + accel, kernelNote, c.GuestLimits}
}

// fallback switches a column that tried KVM to TCG.
func (v *vmColumn) fallback(c *Column, why string) bool {
	if v.accel != accelKVM {
		return false
	}
	v.accel, v.accelWhy = accelTCG, "KVM did not run the guest: "+why
	c.setAccel(c.Notes[1])
	return true
}

// guestLimits states the guest's own limits, from the command's -m and
// -smp: what a program in it meets instead of the host's.
func guestLimits(cmd []string) string {
	mem, cpus := "128", "1" // QEMU's defaults
	for i := 0; i+1 < len(cmd); i++ {
		switch cmd[i] {
		case "-m":
			mem = strings.TrimSuffix(strings.TrimPrefix(cmd[i+1], "size="), "M")
		case "-smp":
			cpus, _, _ = strings.Cut(strings.TrimPrefix(cmd[i+1], "cpus="), ",")
		}
	}
	return "the guest's own limits: " + mem + " MiB of memory, " + cpus + " vCPU, a 64 MiB tmpfs /tmp, " +
		"no process cap but the guest kernel's; the working directory is the host's (no quota)"
}

// guestEnv is the program's whole environment in the guest: a machine of
// its own, which has none of the host's.
func guestEnv(workdir string) []string {
	return []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=" + workdir}
}

// prepareQEMU makes the run's job directory, writes the job into it, and
// sets the run up to read the program's output and status from it.
func (c *Column) prepareQEMU(in *Instance, v *Vars, r RunSpec) error {
	for _, p := range []string{r.Workdir, r.Scratch} {
		if strings.Contains(p, ",") {
			return fmt.Errorf("%q: QEMU's options cannot hold a comma", p)
		}
	}
	if err := os.Chmod(r.Scratch, 0o711); err != nil {
		return err
	}
	v.Job = filepath.Join(r.Scratch, "job")
	if err := mkdirOwned(v.Job, 0o755, c.Starter); err != nil {
		return fmt.Errorf("making the job directory: %w", err)
	}
	cmd := c.Profile.Expand(*v)
	mounts, err := guestShares(cmd, v.Job, c.Starter.UID == 0)
	if err != nil {
		return err
	}
	j := &guest.Job{Argv: r.Program, Dir: r.Workdir, Env: guestEnv(r.Workdir), UID: c.Program.UID, GID: c.Program.GID, Mounts: mounts}
	if err := guest.WriteJob(v.Job, j); err != nil {
		return err
	}
	in.Launch.Argv = c.argv(*v, nil)
	w := &jobWatch{dir: v.Job, accel: c.vm.accel, outputMax: r.OutputMax}
	in.Launch.started, in.Launch.finish = w.start, w.finish
	return nil
}

// guestShares reads the 9p shares of a qemu command (-fsdev local,...
// and -device virtio-9p-pci,...) and returns those the guest mounts in
// the program's root, each at the host path it shares, read-only where
// the share is. The job directory must be shared under guest.JobTag; a
// writable share must not use security_model=none when the emulator
// runs as root (a guest's root could make set-user-ID files of host
// root's).
func guestShares(cmd []string, job string, asRoot bool) ([]guest.Mount, error) {
	type fsdev struct {
		path, model string
		ro          bool
	}
	devs := map[string]fsdev{}
	var tags, ids []string
	for i := 0; i+1 < len(cmd); i++ {
		opts := options(cmd[i+1])
		switch {
		case cmd[i] == "-fsdev":
			devs[opts["id"]] = fsdev{path: opts["path"], model: opts["security_model"], ro: opts["readonly"] == "on"}
		case cmd[i] == "-device" && strings.HasPrefix(cmd[i+1], "virtio-9p-pci,"):
			tags, ids = append(tags, opts["mount_tag"]), append(ids, opts["fsdev"])
		}
	}
	var mounts []guest.Mount
	jobShared := false
	for i, tag := range tags {
		d, ok := devs[ids[i]]
		switch {
		case !ok:
			return nil, fmt.Errorf("9p share %s: no -fsdev with id %s", tag, ids[i])
		case !d.ro && d.model == "none" && asRoot:
			return nil, fmt.Errorf("9p share %s (%s): writable with security_model=none while QEMU runs as root: a guest's root could make set-user-ID files of host root's; use security_model=mapped-xattr", tag, d.path)
		case tag == guest.JobTag:
			jobShared = d.path == job && !d.ro
		default:
			mounts = append(mounts, guest.Mount{Tag: tag, Path: d.path, ReadOnly: d.ro})
		}
	}
	if !jobShared {
		return nil, fmt.Errorf("the command does not share the job directory %s writable with mount_tag=%s", Job, guest.JobTag)
	}
	return mounts, nil
}

// options reads a QEMU option list (driver,key=value,...).
func options(s string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// Guest is what the host saw of a run in a virtual machine.
type Guest struct {
	// Accel is the accelerator (kvm or tcg).
	Accel string
	// Boot is from the emulator's start until the program started,
	// Program until its status was written, Shutdown until the emulator
	// exited: each on the host's clock, from when the job directory's
	// files appeared. A phase that did not happen is 0.
	Boot, Program, Shutdown time.Duration
	// InGuest is the program's run time by the guest's clock.
	InGuest time.Duration
	// Started: the program started; Finished: the init wrote how it ended.
	Started, Finished bool
	// Left is how many processes the init killed after the program ended.
	Left int
	// Error is the init's own failure, if any; Console the end of the
	// guest's console.
	Error, Console string
}

// jobWatch times a run's phases by the job directory's files and reads
// them back when the run has ended.
type jobWatch struct {
	dir       string
	accel     string
	outputMax int
	began     time.Time
	quit      chan struct{}
	done      sync.WaitGroup
	// started and ended are when the host saw the program's start and its
	// status.
	started, ended time.Time
}

// jobPoll is how often the host looks at the job directory.
const jobPoll = 10 * time.Millisecond

func (w *jobWatch) start(at time.Time) {
	w.began, w.quit = at, make(chan struct{})
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		t := time.NewTicker(jobPoll)
		defer t.Stop()
		for {
			select {
			case <-w.quit:
				return
			case now := <-t.C:
				if w.started.IsZero() && exists(filepath.Join(w.dir, guest.StartedFile)) {
					w.started = now
				}
				if w.ended.IsZero() && exists(filepath.Join(w.dir, guest.StatusFile)) {
					w.ended = now
				}
			}
		}
	}()
}

// finish replaces the emulator's streams in o by the program's, its exit
// by the program's, and records the phases.
func (w *jobWatch) finish(o *Outcome) {
	if w.quit != nil {
		close(w.quit)
		w.done.Wait()
	}
	g := &Guest{Accel: w.accel, Console: tail(string(o.Stdout)+string(o.Stderr), 2000)}
	o.Guest = g
	o.Stdout, o.StdoutBytes = readCapped(filepath.Join(w.dir, guest.StdoutFile), w.outputMax)
	o.Stderr, o.StderrBytes = readCapped(filepath.Join(w.dir, guest.StderrFile), w.outputMax)
	exitAt := w.began.Add(o.Wall)
	g.Started = !w.started.IsZero() || exists(filepath.Join(w.dir, guest.StartedFile))
	if st, err := guest.ReadStatus(w.dir); err == nil {
		g.Finished, g.Left, g.Error = st.Error == "" && st.End > 0, st.Left, st.Error
		if g.Finished {
			g.InGuest = time.Duration((st.End - st.Start) * float64(time.Second))
			if o.StoppedBy == "" {
				o.ExitCode, o.Signal = st.ExitCode, st.Signal
			}
		}
	}
	if !w.started.IsZero() {
		g.Boot = w.started.Sub(w.began)
		end := exitAt
		if !w.ended.IsZero() {
			end, g.Shutdown = w.ended, exitAt.Sub(w.ended)
		}
		g.Program = end.Sub(w.started)
	}
	if !g.Started || g.Error != "" {
		// Why the program did not run is on the console.
		msg := []byte("\n" + g.Console)
		o.Stderr, o.StderrBytes = append(o.Stderr, msg...), o.StderrBytes+int64(len(msg))
	}
}

// readCapped reads up to max bytes of the file at p and returns them with
// the file's whole size (nothing when it does not exist).
func readCapped(p string, max int) ([]byte, int64) {
	f, err := os.Open(p)
	if err != nil {
		return nil, 0
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0
	}
	b, _ := io.ReadAll(io.LimitReader(f, int64(max)))
	return b, st.Size()
}

// tail is the last n bytes of s, from a line's start where one is near.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < 200 {
		s = s[i+1:]
	}
	return s
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return !errors.Is(err, os.ErrNotExist)
}
