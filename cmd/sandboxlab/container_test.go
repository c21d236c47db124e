package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// Inside a container: rootful podman, offline, its root made from the
// host's /usr and /etc (as attack --sandbox podman makes it), the built
// binaries bound read-only. L6 needs three things a default container
// withholds, and with the three it runs; without one it fails closed,
// and doctor, inside, says which and the flag that gives it.

// containerL6 are the fewest privileges L6 needs inside rootful podman
// on cgroup v1, each for one of its layers: the podman flags, the layer
// doctor names without them, and what its fix says.
var containerL6 = []struct {
	what    string
	flags   []string
	missing string
	fix     string
}{
	{"mounting the session's own filesystem", []string{"--cap-add", "SYS_ADMIN"}, "session_store", "--cap-add SYS_ADMIN"},
	{"a /proc of the run's own", []string{"--security-opt", "unmask=/proc/*"}, "pid_namespace", "unmask=/proc/*"},
	{"a control group per run", []string{"-v", "/sys/fs/cgroup:/sys/fs/cgroup:rw"}, "cgroup_memory", "/sys/fs/cgroup:/sys/fs/cgroup:rw"},
}

// jsonOf is the JSON object in out, which podman's warnings may precede.
func jsonOf(t *testing.T, out string) []byte {
	t.Helper()
	i := strings.Index(out, "{")
	assert.Assert(t, i >= 0, "no JSON in: %s", out)
	return []byte(out[i:])
}

// podmanIn runs args of the container's sandboxlab in a fresh container
// with extra flags, and returns its output and exit status.
func podmanIn(t *testing.T, extra []string, args ...string) (string, int) {
	t.Helper()
	// podman refuses a run root of over 50 characters, which a test's
	// own temporary directory can be.
	state, err := os.MkdirTemp("", "sbx-ctr-")
	assert.NilError(t, err)
	t.Cleanup(func() { os.RemoveAll(state) })
	rootfs := filepath.Join(state, "rootfs")
	for _, d := range []string{"usr", "etc", "tmp", "proc", "sys", "dev", "opt/sandboxlab"} {
		assert.NilError(t, os.MkdirAll(filepath.Join(rootfs, d), 0o755))
	}
	for _, l := range []string{"bin", "lib", "lib64", "sbin"} {
		assert.NilError(t, os.Symlink("usr/"+l, filepath.Join(rootfs, l)))
	}
	var lim unix.Rlimit
	assert.NilError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &lim))
	cmdline := []string{"--root", state + "/storage", "--runroot", state + "/run", "--tmpdir", state + "/tmp",
		"run", "--rm", "--network", "none",
		// podman's own defaults fail where root lacks CAP_SYS_RESOURCE.
		"--ulimit", fmt.Sprintf("nofile=%d:%d", lim.Max, lim.Max), "--ulimit", "nproc=4096:4096",
		"-v", "/usr:/usr:ro", "-v", "/etc:/etc:ro", "-v", filepath.Dir(bin) + ":/opt/sandboxlab:ro"}
	cmdline = append(append(cmdline, extra...), "--rootfs", rootfs, "/opt/sandboxlab/sandboxlab")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "podman", append(cmdline, args...)...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		assert.NilError(t, err, "%s", out)
	}
	return string(out), code
}

func TestInsideAContainer(t *testing.T) {
	if _, err := exec.LookPath("podman"); err != nil {
		t.Skip("no podman")
	}
	if os.Geteuid() != 0 {
		t.Skip("rootful podman: run as root")
	}
	var all []string
	for _, c := range containerL6 {
		all = append(all, c.flags...)
	}
	out, code := podmanIn(t, all, "run", "--", "/usr/bin/python3", "-c", "print('ran at L6')")
	assert.Check(t, is.Equal(code, 0), out)
	assert.Check(t, is.Contains(out, "ran at L6\n"), out)
	assert.Check(t, is.Contains(out, "L6 exited (status 0)"), out)

	out, code = podmanIn(t, all, "doctor", "--format", "json")
	var d struct {
		DefaultOK bool `json:"default_ok"`
	}
	assert.Check(t, json.Unmarshal(jsonOf(t, out), &d), out)
	assert.Check(t, d.DefaultOK && code == 0, "doctor inside, with the three: %s", out)

	// Without each one, L6 is refused with its reason, and doctor names
	// the layer and the flag.
	for _, c := range containerL6 {
		t.Run("without "+c.missing, func(t *testing.T) {
			var extra []string
			for _, o := range containerL6 {
				if o.missing != c.missing {
					extra = append(extra, o.flags...)
				}
			}
			out, code := podmanIn(t, extra, "run", "--", "/usr/bin/python3", "-c", "print('ran at L6')")
			assert.Check(t, is.Equal(code, 125), "without %s: %s", c.what, out)
			assert.Check(t, strings.Contains(out, "sandboxlab run: ") && !strings.Contains(out, "ran at L6"), "without %s: %s", c.what, out)
			out, code = podmanIn(t, extra, "doctor", "--format", "json")
			assert.Check(t, is.Equal(code, 125), out)
			var d struct {
				Levels []struct {
					Level   int    `json:"level"`
					OK      bool   `json:"ok"`
					Missing string `json:"missing"`
					Fix     string `json:"fix"`
				} `json:"levels"`
			}
			assert.NilError(t, json.Unmarshal(jsonOf(t, out), &d), out)
			l6 := d.Levels[len(d.Levels)-1]
			assert.Check(t, !l6.OK && l6.Level == 6)
			assert.Check(t, is.Equal(l6.Missing, c.missing), "%+v", l6)
			assert.Check(t, is.Contains(l6.Fix, "inside a container (podman)"), "%+v", l6)
			assert.Check(t, is.Contains(l6.Fix, c.fix), "%+v", l6)
		})
	}
}
