package guest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/sandbox/reexec"
)

// Registered early: in the guest nothing else of the binary needs to
// initialise, and the guest's CPU is emulated.
func init() { reexec.RegisterEarly(InitPath, Main) }

// Where the init mounts things in the guest.
const (
	jobDir  = "/job"
	progDir = "/prog" // the program's root
)

// shareWait bounds the wait for the job share's device to appear after
// its modules have loaded.
const shareWait = 10 * time.Second

// Main is the guest's init. It never returns in a guest: it powers the
// machine off. Run anywhere but as PID 1 it refuses.
func Main([]string) int {
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "sandboxlab guest init: not PID 1 of a guest; refusing to run")
		return 2
	}
	// no_new_privs and the fork that inherits it must be on one thread.
	runtime.LockOSThread()
	st := Status{ExitCode: -1, Init: uptime()}
	err := boot()
	if err == nil {
		err = runJob(&st)
	}
	if err != nil {
		st.Error = err.Error()
		fmt.Fprintln(os.Stderr, "sandboxlab guest init:", err)
	}
	if werr := writeStatus(&st); werr != nil {
		fmt.Fprintln(os.Stderr, "sandboxlab guest init:", werr)
	}
	unix.Sync()
	unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	return 1 // not reached: the machine is off
}

// boot mounts the kernel's file systems, loads the modules and mounts the
// job share.
func boot() error {
	for _, m := range []struct{ src, dir, fs string }{
		{"proc", "/proc", "proc"}, {"sysfs", "/sys", "sysfs"}, {"devtmpfs", "/dev", "devtmpfs"},
	} {
		if err := mount(m.src, m.dir, m.fs, unix.MS_NOSUID|unix.MS_NOEXEC, ""); err != nil {
			return err
		}
	}
	if err := loadModules(); err != nil {
		return err
	}
	deadline := time.Now().Add(shareWait)
	for {
		err := mount(JobTag, jobDir, "9p", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ninep)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond) // the virtio device is still being probed
	}
}

// ninep are the 9p mount options: virtio transport, the Linux dialect,
// 500 KiB messages, virtio's most (fewer round trips through the
// emulated device).
const ninep = "trans=virtio,version=9p2000.L,msize=512000"

// mount makes dir and mounts src on it.
func mount(src, dir, fstype string, flags uintptr, data string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("making %s: %w", dir, err)
	}
	if err := unix.Mount(src, dir, fstype, flags, data); err != nil {
		return fmt.Errorf("mounting %s (%s) on %s: %w", src, fstype, dir, err)
	}
	return nil
}

// loadModules loads the initrd's modules in their order.
func loadModules() error {
	b, err := os.ReadFile(filepath.Join(ModulesDir, ModuleOrder))
	if err != nil {
		return fmt.Errorf("reading the module order: %w", err)
	}
	for _, name := range strings.Fields(string(b)) {
		f, err := os.Open(filepath.Join(ModulesDir, name))
		if err != nil {
			return fmt.Errorf("loading module %s: %w", name, err)
		}
		err = unix.FinitModule(int(f.Fd()), "", 0)
		f.Close()
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("loading module %s: %w", name, err)
		}
	}
	return nil
}

// runJob reads the job, builds the program's root, runs the program and
// records how it ended in st.
func runJob(st *Status) error {
	b, err := os.ReadFile(filepath.Join(jobDir, JobFile))
	if err != nil {
		return fmt.Errorf("reading the job: %w", err)
	}
	var j Job
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("reading the job: %w", err)
	}
	if err := j.validate(); err != nil {
		return err
	}
	if err := buildRoot(&j); err != nil {
		return err
	}
	return runProgram(&j, st)
}

// buildRoot makes the program's root: a tmpfs with the system's
// directories as symbolic links into /usr (as Debian lays them out), the
// job's shares (never set-user-ID, never devices), the guest's /dev and a
// fresh /proc, a tmpfs /tmp, and then the root itself read-only.
func buildRoot(j *Job) error {
	if err := mount("tmpfs", progDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=16m"); err != nil {
		return err
	}
	for _, l := range []string{"bin", "lib", "lib64", "sbin"} {
		if err := os.Symlink("usr/"+l, filepath.Join(progDir, l)); err != nil {
			return fmt.Errorf("making the program's root: %w", err)
		}
	}
	const shareFlags = unix.MS_NOSUID | unix.MS_NODEV
	if err := mount("/dev", filepath.Join(progDir, "dev"), "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	if err := mount("proc", filepath.Join(progDir, "proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return err
	}
	size := j.TmpSize
	if size == "" {
		size = "64m"
	}
	if err := mount("tmpfs", filepath.Join(progDir, "tmp"), "tmpfs", shareFlags, "mode=1777,size="+size); err != nil {
		return err
	}
	// The shares last: one may be below /tmp (a working directory there).
	for _, m := range j.Mounts {
		flags, opts := uintptr(shareFlags), ninep
		if m.ReadOnly {
			// Nothing writes a read-only share during a run: the guest may
			// cache it (Python's start reads hundreds of files).
			flags, opts = flags|unix.MS_RDONLY, opts+",cache=loose"
		}
		if err := mount(m.Tag, filepath.Join(progDir, m.Path), "9p", flags, opts); err != nil {
			return err
		}
	}
	if err := unix.Mount("", progDir, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|shareFlags, ""); err != nil {
		return fmt.Errorf("making the program's root read-only: %w", err)
	}
	return nil
}

// runProgram runs the job's program in its root as its unprivileged
// user, with no_new_privs, its output on the job share's files, and
// records how it ended; then kills whatever it left.
func runProgram(j *Job, st *Status) error {
	stdout, err := os.Create(filepath.Join(jobDir, StdoutFile))
	if err != nil {
		return fmt.Errorf("making the program's output file: %w", err)
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(jobDir, StderrFile))
	if err != nil {
		return fmt.Errorf("making the program's error file: %w", err)
	}
	defer stderr.Close()
	env := j.Env
	if env == nil {
		env = []string{} // nil would pass the init's own on
	}
	cmd := &exec.Cmd{Path: j.Argv[0], Args: j.Argv, Env: env, Dir: j.Dir, Stdout: stdout, Stderr: stderr,
		SysProcAttr: &syscall.SysProcAttr{
			Chroot:     progDir,
			Credential: &syscall.Credential{Uid: uint32(j.UID), Gid: uint32(j.GID), Groups: []uint32{}},
			Setsid:     true,
		}}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	st.Start = uptime()
	if err := os.WriteFile(filepath.Join(jobDir, StartedFile), []byte(strconv.FormatFloat(st.Start, 'f', 3, 64)+"\n"), 0o644); err != nil {
		return fmt.Errorf("marking the start: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the program: %w", err)
	}
	cmd.Wait()
	st.End = uptime()
	ps := cmd.ProcessState
	st.ExitCode = ps.ExitCode()
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		st.Signal = unix.SignalName(ws.Signal())
	}
	st.Left = killRest()
	return nil
}

// killRest kills every process of the guest but the init, reaps them,
// and returns how many there were.
func killRest() int {
	n := 0
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid != 1 && !kernelThread(pid) {
			n++
		}
	}
	unix.Kill(-1, unix.SIGKILL)
	for {
		if _, err := unix.Wait4(-1, nil, 0, nil); errors.Is(err, unix.ECHILD) {
			return n
		}
	}
}

// kernelThread reports whether pid is a kernel thread (an empty command
// line), which the init neither counts nor kills.
func kernelThread(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return err != nil || len(b) == 0
}

// writeStatus writes st to the job share and flushes it to the host.
func writeStatus(st *Status) error { return writeStatusTo(jobDir, st) }

// writeStatusTo writes st into the job directory dir.
func writeStatusTo(dir string, st *Status) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, StatusFile))
	if err != nil {
		return fmt.Errorf("writing the status: %w", err)
	}
	_, err = f.Write(b)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing the status: %w", err)
	}
	return nil
}

// uptime is the guest's CLOCK_BOOTTIME in seconds.
func uptime() float64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts)
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}
