// Command startbench measures how long a whole sandboxlab process takes to
// run /bin/true, next to plain /bin/true and two peers (bubblewrap with
// every namespace, unshare with the same namespaces as L5 less IPC and
// UTS), and prints the medians side by side with their ratios. It is the
// whole-process half of 'make bench'; the library's own figures are
// package sandbox's BenchmarkStart.
//
// The commands are interleaved, each round in a rotated order, so that a
// busy moment of a shared machine hits all of them alike, and the load
// average before and after is printed: a reader can tell a quiet run from
// a busy one, and a busy run is to be repeated, not believed. A command
// that does not work here (a peer not installed, L6 for a user without
// control groups) is skipped with a line saying why.
//
// Then it says where a run's time goes (whereTimeGoes): the Go
// initialisation of the CLI and of the init, from GODEBUG=inittrace=1,
// and the time from the init's exec to the program's exec, from the
// library's Result.InitSetup. Run from bin/ (make bench builds it there),
// its runs start bin/sandboxlab-init, the init that ships.
//
// It is a measuring tool for the repository, not part of the CLI.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"sandboxlab/sandbox"
)

// subject is one command measured, with its samples.
type subject struct {
	name      string
	argv      []string
	wall, cpu []time.Duration
}

func main() {
	bin := flag.String("bin", "bin/sandboxlab", "the sandboxlab `BINARY` to measure")
	before := flag.String("before", "", "also measure the levels of this older sandboxlab `BINARY`, as \"before Ln\"")
	n := flag.Int("n", 200, "`SAMPLES` of each command")
	levels := flag.String("levels", fmt.Sprintf("0,5,%d", sandbox.Levels-1), "comma-separated `LEVELS` to measure")
	flag.Parse()
	subjects, err := plan(*bin, *before, *levels)
	if err != nil {
		fmt.Fprintln(os.Stderr, "startbench:", err)
		os.Exit(1)
	}
	subjects = usable(subjects, os.Stdout)
	fmt.Printf("load average before: %s\n", loadavg())
	for round := range *n {
		for i := range subjects {
			s := subjects[(round+i)%len(subjects)]
			if err := s.sample(); err != nil {
				fmt.Fprintf(os.Stderr, "startbench: %s: %v\n", s.name, err)
				os.Exit(1)
			}
		}
	}
	fmt.Printf("load average after:  %s\n", loadavg())
	fmt.Printf("%d runs of each, interleaved; times in ms; cpu is user+system of the process and all it waited for\n\n", *n)
	report(os.Stdout, subjects)
	fmt.Println()
	if err := whereTimeGoes(os.Stdout, *bin, max(*n/4, 11)); err != nil {
		fmt.Fprintln(os.Stderr, "startbench:", err)
		os.Exit(1)
	}
}

// plan lists the commands to measure.
func plan(bin, before, levels string) ([]*subject, error) {
	list := []*subject{{name: "/bin/true", argv: []string{"/bin/true"}}}
	for _, b := range []struct{ label, path string }{{"sandboxlab", bin}, {"before", before}} {
		if b.path == "" {
			continue
		}
		abs, err := exec.LookPath(b.path)
		if err != nil {
			return nil, fmt.Errorf("the %s binary: %w", b.label, err)
		}
		for _, l := range strings.Split(levels, ",") {
			if _, err := strconv.Atoi(l); err != nil {
				return nil, fmt.Errorf("-levels: %q is not a level", l)
			}
			list = append(list, &subject{name: b.label + " L" + l, argv: []string{abs, "run", "--level", l, "--", "/bin/true"}})
		}
	}
	return append(list,
		&subject{name: "bwrap", argv: []string{"bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "/bin/true"}},
		&subject{name: "unshare", argv: []string{"unshare", "--user", "--map-root-user", "--pid", "--fork", "--net", "--mount", "--mount-proc", "/bin/true"}},
	), nil
}

// usable keeps the subjects that run and exit 0 here, saying on w why
// each other one is skipped.
func usable(list []*subject, w io.Writer) []*subject {
	var out []*subject
	for _, s := range list {
		path, err := exec.LookPath(s.argv[0])
		if err != nil {
			fmt.Fprintf(w, "skipped %s: not installed\n", s.name)
			continue
		}
		s.argv[0] = path
		var stderr bytes.Buffer
		cmd := exec.Command(path, s.argv[1:]...)
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			why, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
			fmt.Fprintf(w, "skipped %s: %v: %s\n", s.name, err, why)
			continue
		}
		out = append(out, s)
	}
	return out
}

// sample runs the subject once and records its wall and CPU time.
func (s *subject) sample() error {
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return err
	}
	s.wall = append(s.wall, time.Since(start))
	s.cpu = append(s.cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	return nil
}

// report writes the table (medians, quartiles, each median against plain
// /bin/true's and bubblewrap's) and how the medians stand against the
// start-up goals.
func report(w io.Writer, list []*subject) {
	med := map[string]time.Duration{}
	top := ""
	for _, s := range list {
		med[s.name] = quantile(s.wall, 0.5)
		if strings.HasPrefix(s.name, "sandboxlab L") {
			top = s.name
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "command\twall median\twall p25-p75\tcpu median\tx /bin/true\tx bwrap\t")
	for _, s := range list {
		m := med[s.name]
		fmt.Fprintf(tw, "%s\t%s\t%s-%s\t%s\t%s\t%s\t\n", s.name, ms(m), ms(quantile(s.wall, 0.25)), ms(quantile(s.wall, 0.75)),
			ms(quantile(s.cpu, 0.5)), ratio(m, med["/bin/true"]), ratio(m, med["bwrap"]))
	}
	tw.Flush()
	fmt.Fprintln(w)
	goal := func(what string, got, limit time.Duration) {
		verdict := "met"
		if got > limit {
			verdict = "NOT met"
		}
		fmt.Fprintf(w, "goal %-30s %7s ms against %7s ms: %s\n", what, ms(got), ms(limit), verdict)
	}
	l5, have5 := med["sandboxlab L5"]
	if bw, ok := med["bwrap"]; ok && have5 {
		goal("L5 <= bwrap", l5, bw)
	}
	if t, ok := med[top]; ok && top != "sandboxlab L5" {
		if bw, ok := med["bwrap"]; ok {
			goal(strings.TrimPrefix(top, "sandboxlab ")+" <= 1.2 x bwrap", t, bw*12/10)
		}
	}
	if l0, ok := med["sandboxlab L0"]; ok {
		goal("L0 <= 1.5 x /bin/true + 1 ms", l0, med["/bin/true"]*3/2+time.Millisecond)
	}
}

// quantile is the q-quantile of d (nearest rank); 0 for no samples.
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1)+0.5)]
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64)
}

// ratio is a/b to two places, or "-" without a b.
func ratio(a, b time.Duration) string {
	if b == 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(a)/float64(b), 'f', 2, 64)
}

// loadavg is the first three fields of /proc/loadavg.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
