package harnesscmd

import (
	"bufio"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"sandboxlab"
	"sandboxlab/harness"
	"sandboxlab/report"
)

// renderOptions says how reports are rendered for stdout: text fitted to
// its terminal (or $COLUMNS, else 80), and for the Stryker report and the
// page the planted sites' sources built into the binary, sandboxlab's
// version and the machine.
func renderOptions(stdout io.Writer) report.Options {
	return report.Options{Width: outputWidth(stdout), Sources: sandboxlab.Sources, Locate: harness.SiteSpans(sandboxlab.Sources),
		Version: version(), System: system()}
}

// outputWidth is the width to fit text to on w: its terminal's, else
// $COLUMNS, else 0 (the report's default, 80).
func outputWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if n := terminalWidth(f); n > 0 {
			return n
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}

// version is sandboxlab's version as the build recorded it: the module's
// version, or the commit it was built from ("+dirty" when the tree had
// changes).
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return "devel-" + rev
}

// system describes this machine for the Stryker report. Every field is
// best effort: one that cannot be read is left out.
func system() *report.StrykerSystem {
	s := &report.StrykerSystem{CI: os.Getenv("CI") != "" || os.Getenv("GITHUB_ACTIONS") == "true",
		OS:  &report.StrykerOS{Platform: runtime.GOOS, Description: osRelease()},
		CPU: &report.StrykerCPU{LogicalCores: runtime.NumCPU(), Model: cpuModel()}}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		s.OS.Version = unix.ByteSliceToString(u.Release[:])
	}
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		s.RAM = &report.StrykerRAM{Total: int64(si.Totalram) * int64(si.Unit) >> 20}
	}
	return s
}

// osRelease is PRETTY_NAME from /etc/os-release.
func osRelease() string {
	v, _ := firstField("/etc/os-release", "PRETTY_NAME=")
	return strings.Trim(v, `"`)
}

// cpuModel is the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	v, _ := firstField("/proc/cpuinfo", "model name")
	_, v, _ = strings.Cut(v, ":")
	return strings.TrimSpace(v)
}

// firstField returns the rest of the first line of path that starts
// with prefix.
func firstField(path, prefix string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			return rest, true
		}
	}
	return "", false
}
