package checks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"sandboxlab/mutants"
	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/reexec"
)

var failClosed = &Check{
	ID:      "fail_closed",
	Promise: "when isolation cannot be had, the run is refused, never run bare",
	Level:   3,
	Body: func(t *T) {
		marker := filepath.Join(t.ownedDir("out"), "ran")
		verdict, err := probeFailClosed(marker)
		t.NilError(err)
		_, statErr := os.Stat(marker)
		ran := !errors.Is(statErr, fs.ErrNotExist)
		t.Check(!ran, "the program ran although no user namespace could be made (%s)", verdict.Error)
		t.Check(verdict.Unavailable, "the error is not ErrUnavailable: %q", verdict.Error)
		t.Evidence("refused with %q; the program never ran", verdict.Error)
	},
}

// probeHelper is the helper this binary runs as the fail-closed probe.
const probeHelper = "sandboxlab-failclosed-probe"

// probeVerdict is what the probe reports on its standard output.
type probeVerdict struct {
	Unavailable bool   `json:"unavailable"`
	Error       string `json:"error"`
}

// probeFailClosed runs the probe in a user namespace of its own (root
// there, the program's identity on the host) where it forbids further user
// namespaces, as a locked-down machine or container would; it then asks
// the sandbox for L3, which needs one. The probe gets the active defect on
// its command line, like the sandbox's own init.
func probeFailClosed(marker string) (probeVerdict, error) {
	var v probeVerdict
	id := sandbox.HostIdentity()
	cover := "-"
	cmd := reexec.Command(probeHelper, string(mutants.Active()), marker)
	if f := mutants.ChildFile(); f != nil {
		// The harness records the planted sites the probe reaches too.
		cmd.ExtraFiles, cover = []*os.File{f}, "3"
	}
	cmd.Args = append(cmd.Args, cover)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: id.UID, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: id.GID, Size: 1}},
		Credential:  &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true},
		Pdeathsig:   syscall.SIGKILL,
	}
	out, err := cmd.Output()
	if err != nil {
		return v, fmt.Errorf("running the fail-closed probe: %w (%s)", err, out)
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return v, fmt.Errorf("reading the probe's verdict %q: %w", out, err)
	}
	return v, nil
}

func init() {
	reexec.Register(probeHelper, func(args []string) int {
		if len(args) != 3 {
			fmt.Fprintln(os.Stderr, probeHelper+": want DEFECT MARKER COVER-FD|-")
			return 2
		}
		if args[2] != "-" {
			fd, err := strconv.Atoi(args[2])
			if err == nil {
				err = mutants.Cover(fd)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, probeHelper+":", err)
				return 2
			}
		}
		return failClosedProbe(args[0], args[1])
	})
}

// failClosedProbe is the probe's body (see probeFailClosed).
func failClosedProbe(defect, marker string) int {
	if err := mutants.Enable(defect); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.WriteFile("/proc/sys/user/max_user_namespaces", []byte("0"), 0); err != nil {
		fmt.Fprintln(os.Stderr, "forbidding user namespaces:", err)
		return 1
	}
	// Sessions go next to the marker: the probe's identity owns that
	// directory, and may not be able to write where TMPDIR points.
	var err error
	s, err := sandbox.NewSession(sandbox.Options{Policy: sandbox.MustPreset(3), Root: filepath.Dir(marker)})
	if err == nil {
		_, err = s.Run(context.Background(), sandbox.Command{
			Path: evidence.Python, Args: []string{"-c", "import sys\nopen(sys.argv[1], 'w').write('ran')", marker},
		})
		s.Close()
	}
	v := probeVerdict{Unavailable: errors.Is(err, sandbox.ErrUnavailable)}
	if err != nil {
		v.Error = err.Error()
	}
	json.NewEncoder(os.Stdout).Encode(v)
	return 0
}
