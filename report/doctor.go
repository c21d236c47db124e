package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Doctor is the report of 'sandboxlab doctor': what this machine can give
// the sandbox, level by level, and which other sandboxes are installed
// for 'attack --sandbox'. Every line is measured on the machine (a level
// is a real run of /bin/true at that level), never inferred from a
// version number.
type Doctor struct {
	// Host says what the report was made on and as whom.
	Host DoctorHost `json:"host"`
	// Features are what the kernel offers the layers: user namespaces,
	// Landlock, seccomp, control groups and the like.
	Features []DoctorItem `json:"features"`
	// Levels is one line per preset, L0 up.
	Levels []DoctorLevel `json:"levels"`
	// Tools are the other sandboxes and helpers found on the PATH.
	Tools []DoctorTool `json:"tools"`
	// DefaultLevel is the level 'sandboxlab run' uses, and DefaultOK
	// whether it runs here: the command's exit status.
	DefaultLevel int  `json:"default_level"`
	DefaultOK    bool `json:"default_ok"`
}

// DoctorHost is the machine and the caller.
type DoctorHost struct {
	Kernel string `json:"kernel"`
	Arch   string `json:"arch"`
	// Identity is who ran the doctor and as whom programs run.
	Identity Identity `json:"identity"`
}

// DoctorItem is one feature of the host.
type DoctorItem struct {
	// Name is the feature's stable id, such as landlock.
	Name string `json:"name"`
	// OK is true when the layers that need it can have it.
	OK bool `json:"ok"`
	// Detail says what was found (a version, an ABI, a sysctl's value).
	Detail string `json:"detail"`
	// Fix says what to do when it is not OK ("" otherwise).
	Fix string `json:"fix,omitempty"`
}

// DoctorLevel is one preset tried on the machine.
type DoctorLevel struct {
	Level int    `json:"level"`
	Name  string `json:"name"`
	// OK is true when a run of /bin/true at the level exited 0.
	OK bool `json:"ok"`
	// Layers are the layers the level has, by name (sandbox.Layers).
	Layers []string `json:"layers"`
	// Missing is the first layer the machine could not give, and Why and
	// Fix what was refused and what to do ("" when OK).
	Missing string `json:"missing,omitempty"`
	Why     string `json:"why,omitempty"`
	Fix     string `json:"fix,omitempty"`
	// MS is how long the trial run took, in milliseconds.
	MS int64 `json:"ms"`
}

// DoctorTool is one program the harness can use when it is installed.
type DoctorTool struct {
	Name string `json:"name"`
	// Found is true when it is on the PATH and answered.
	Found bool `json:"found"`
	// Path and Version are where it is and what it says it is.
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
	// For says what sandboxlab uses it for.
	For string `json:"for"`
	// Note says what is missing besides, or why it is not usable.
	Note string `json:"note,omitempty"`
}

func okWord(ok bool) string { return yesNo(ok, "ok", "MISSING") }

// Tables renders the doctor's findings: the host, then features, levels
// and tools, each a table, then the verdict on the default level.
func (d *Doctor) Tables(w io.Writer, md bool) error {
	p := newPrinter(w, md)
	p.printf("Kernel %s (%s); %s.\n\n", d.Host.Kernel, d.Host.Arch, d.Host.Identity.who())
	var rows [][]string
	for _, f := range d.Features {
		rows = append(rows, []string{f.Name, okWord(f.OK), joinNonEmpty(f.Detail, f.Fix)})
	}
	p.table([]string{"feature", "", "found; fix"}, rows)
	rows = nil
	var below []string
	for _, l := range d.Levels {
		what := layerChange(below, l.Layers)
		if !l.OK {
			what = "needs " + l.Missing + ": " + l.Why
			if l.Missing == "" {
				what = "unavailable: " + l.Why
			}
			if !strings.Contains(l.Why, l.Fix) {
				what = joinNonEmpty(what, l.Fix)
			}
		}
		below = l.Layers
		rows = append(rows, []string{"L" + strconv.Itoa(l.Level) + " " + l.Name, okWord(l.OK), what})
	}
	p.table([]string{"level", "", "adds to the level below (or what is missing, and the fix)"}, rows)
	rows = nil
	for _, t := range d.Tools {
		found := joinNonEmpty(t.Version, t.Note)
		if !t.Found {
			found = joinNonEmpty("not installed", t.Note)
		}
		rows = append(rows, []string{t.Name, yesNo(t.Found, "ok", "-"), t.For, found})
	}
	p.table([]string{"tool", "", "for", "found"}, rows)
	if d.DefaultOK {
		p.printf("The default level, L%d, runs on this machine.\n", d.DefaultLevel)
	} else {
		p.printf("The default level, L%d, does NOT run on this machine: %s.\n", d.DefaultLevel, d.firstRunnable())
	}
	return p.err
}

// layerChange says what layers has beyond below, and what of below it
// gives up (L6 trades the address-space limit for a real-memory one).
func layerChange(below, layers []string) string {
	var parts []string
	for _, l := range layers {
		if !slices.Contains(below, l) {
			parts = append(parts, l)
		}
	}
	for _, l := range below {
		if !slices.Contains(layers, l) {
			parts = append(parts, "not "+l)
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// firstRunnable says which levels do run, for the closing line.
func (d *Doctor) firstRunnable() string {
	best := -1
	for _, l := range d.Levels {
		if l.OK {
			best = l.Level
		}
	}
	if best < 0 {
		return "no level runs"
	}
	return fmt.Sprintf("use --level %d or lower, or fix what the table names", best)
}

// joinNonEmpty joins the non-empty parts with "; ".
func joinNonEmpty(parts ...string) string {
	var out []string
	for _, s := range parts {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "; ")
}

// JUnit gives a test case per feature, level and tool: a level that does
// not run fails, a missing feature or tool is skipped.
func (d *Doctor) JUnit() *TestSuites {
	var cases []TestCase
	for _, f := range d.Features {
		tc := TestCase{Name: "feature " + f.Name, ClassName: "sandboxlab.doctor", SystemOut: f.Detail + "\n"}
		if !f.OK {
			tc.Skipped = &Skipped{Message: joinNonEmpty(f.Detail, f.Fix)}
		}
		cases = append(cases, tc)
	}
	for _, l := range d.Levels {
		tc := TestCase{Name: fmt.Sprintf("level L%d", l.Level), ClassName: "sandboxlab.doctor", Time: seconds(l.MS)}
		if l.OK {
			tc.SystemOut = strings.Join(l.Layers, ", ") + "\n"
		} else {
			msg := "needs " + l.Missing + ": " + l.Why
			if l.Missing == "" {
				msg = "unavailable: " + l.Why
			}
			tc.Failure = &Problem{Message: msg, Type: "level unavailable", Text: l.Fix + "\n"}
		}
		cases = append(cases, tc)
	}
	for _, t := range d.Tools {
		tc := TestCase{Name: "tool " + t.Name, ClassName: "sandboxlab.doctor", SystemOut: joinNonEmpty(t.Path, t.Version, t.Note) + "\n"}
		if !t.Found {
			tc.Skipped = &Skipped{Message: joinNonEmpty("not installed", t.Note)}
		}
		cases = append(cases, tc)
	}
	return newSuites("sandboxlab doctor", newSuite("doctor", -1, d.Host.Identity.properties(), cases))
}
