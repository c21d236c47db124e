// Package guest is the init of the virtual machine the qemu backend boots
// for each run: PID 1 of the guest, started by the kernel from an initrd
// the harness builds (this binary, the 9p and virtio modules). It loads
// the modules, mounts the job share, reads the job (the program's argv,
// working directory, environment and identity, and the shares to mount
// in the program's root), builds that root, runs the program in it as an
// unprivileged user with its output on files of the job share, writes how
// it ended, kills whatever the program left, and powers the machine off.
//
// It is this project's own binary started as a helper (the kernel runs it
// as InitPath, which is the helper's name), registered early so that
// nothing else of the binary initialises in the guest. It imports the
// standard library, golang.org/x/sys/unix and sandbox/reexec only.
package guest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// InitPath is where the init is in the initrd, and so the name the
// kernel starts it under (rdinit=InitPath): the helper's name.
const InitPath = "/sandboxlab-guest-init"

// ModulesDir holds the kernel modules in the initrd, and ModuleOrder,
// inside it, lists their file names in the order they load.
const (
	ModulesDir  = "/modules"
	ModuleOrder = "order"
)

// JobTag is the mount tag of the job share (a writable 9p share).
const JobTag = "sandboxlab-job"

// The job share's files.
const (
	// JobFile is the job (Job as JSON), written by the harness.
	JobFile = "job.json"
	// StdoutFile and StderrFile are the program's output streams.
	StdoutFile = "stdout"
	StderrFile = "stderr"
	// StartedFile appears just before the program starts: the harness
	// times the boot by it.
	StartedFile = "started"
	// StatusFile is how the program ended (Status as JSON), written by
	// the init once the program has ended.
	StatusFile = "status.json"
)

// Job is what the harness asks the guest to run.
type Job struct {
	// Argv is the program's command; Argv[0] is an absolute path inside
	// the program's root.
	Argv []string `json:"argv"`
	// Dir is its working directory, Env its whole environment.
	Dir string   `json:"dir"`
	Env []string `json:"env"`
	// UID and GID are its identity in the guest (never 0).
	UID int `json:"uid"`
	GID int `json:"gid"`
	// Mounts are the 9p shares mounted in the program's root.
	Mounts []Mount `json:"mounts"`
	// TmpSize is the size of the program's tmpfs /tmp (a size as mount
	// takes it: "64m").
	TmpSize string `json:"tmp_size"`
}

// Mount is a 9p share mounted in the program's root at Path.
type Mount struct {
	Tag      string `json:"tag"`
	Path     string `json:"path"`
	ReadOnly bool   `json:"read_only"`
}

// Status is how the program ended, as the guest's init saw it. Times are
// the guest's uptime in seconds.
type Status struct {
	// ExitCode is the program's exit status, -1 when a signal ended it;
	// Signal names that signal.
	ExitCode int    `json:"exit_code"`
	Signal   string `json:"signal,omitempty"`
	// Error says why the init could not run the program ("" when it ran).
	Error string `json:"error,omitempty"`
	// Init is when the init started, Start and End when the program
	// started and ended.
	Init  float64 `json:"init"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	// Left is how many processes the init found and killed after the
	// program had ended.
	Left int `json:"left"`
}

// validate checks a job before anything of it is used.
func (j *Job) validate() error {
	switch {
	case len(j.Argv) == 0 || !filepath.IsAbs(j.Argv[0]):
		return fmt.Errorf("job: want an absolute program path, got %q", j.Argv)
	case !filepath.IsAbs(j.Dir):
		return fmt.Errorf("job: working directory %q is not absolute", j.Dir)
	case j.UID <= 0 || j.GID <= 0:
		return fmt.Errorf("job: uid %d, gid %d: the program never runs as root", j.UID, j.GID)
	}
	for _, m := range j.Mounts {
		if m.Tag == "" || !filepath.IsAbs(m.Path) || filepath.Clean(m.Path) == "/" {
			return fmt.Errorf("job: share %q at %q: want a tag and an absolute path below /", m.Tag, m.Path)
		}
	}
	return nil
}

// WriteJob writes j into the job directory dir, as the harness does.
func WriteJob(dir string, j *Job) error {
	if err := j.validate(); err != nil {
		return err
	}
	b, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("encoding the job: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, JobFile), b, 0o644); err != nil {
		return fmt.Errorf("writing the job: %w", err)
	}
	return nil
}

// ReadStatus reads how the program ended from the job directory dir.
func ReadStatus(dir string) (*Status, error) {
	b, err := os.ReadFile(filepath.Join(dir, StatusFile))
	if err != nil {
		return nil, fmt.Errorf("reading the guest's status: %w", err)
	}
	var s Status
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("reading the guest's status: %w", err)
	}
	return &s, nil
}
