package harness

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"slices"
	"strconv"
	"strings"

	"sandboxlab/harness/gosource"
	"sandboxlab/mutants"
	"sandboxlab/report"
)

// Since is what a diff changed, as mutate --since runs it (after
// cargo-mutants' --in-diff): the defects whose planted site lies in a
// declaration the diff changed, and the probes whose files it changed.
// The unit of a site is the top-level declaration (a function, mostly)
// holding its mutants.On call, not the call's line: what a defect does is
// the branch the call guards and the code around it, and an edit two lines
// below the call changes it as much as an edit of the call. A change of
// the library outside every site's declaration runs no defect: such a
// run is partial by design, and says so; mutate --incremental is the mode
// that sees every change.
type Since struct {
	// Rev is the revision the diff was taken from.
	Rev string
	// Sites holds the ids of the defects whose site's declaration the
	// diff changed.
	Sites map[string]bool
	// Probes holds the checks' and attacks' keys (as Inputs.Probes:
	// checks/<id>, attacks/<id>) whose files the diff changed: their own,
	// the files their package shares, or the machinery every probe runs.
	Probes map[string]bool
}

// lineRange is lines [from, to] of a file, counted from 1.
type lineRange struct{ from, to int }

// GitSince asks git what changed in the checkout at root since rev (the
// tracked files, against the working tree, and the untracked files that
// git does not ignore, as wholly new) and returns what that touches of
// u's defects and probes.
func GitSince(ctx context.Context, root, rev string, u Universe) (*Since, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", root, "-c", "core.quotePath=false"}, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return string(out), nil
	}
	diff, err := git("diff", "--no-color", "--no-ext-diff", "--relative", "-U0", rev, "--")
	if err != nil {
		return nil, err
	}
	changed := parseDiff(diff)
	untracked, err := git("ls-files", "--others", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	for _, f := range strings.Split(strings.TrimSpace(untracked), "\n") {
		if f != "" {
			changed[f] = []lineRange{{1, 1 << 30}}
		}
	}
	return SelectSince(os.DirFS(root), rev, changed, u)
}

// parseDiff reads a unified diff (-U0) into the lines each file's new
// version has changed. A deletion marks the lines on either side of it;
// a file changed without a hunk (its mode, a rename, a deletion) is there
// with no line.
func parseDiff(diff string) map[string][]lineRange {
	out := map[string][]lineRange{}
	file := ""
	touch := func(name string) {
		if _, ok := out[name]; !ok {
			out[name] = nil
		}
	}
	sc := bufio.NewScanner(strings.NewReader(diff))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "diff --git "):
			file = ""
			for _, name := range gitPaths(strings.TrimPrefix(line, "diff --git ")) {
				touch(name)
			}
		case strings.HasPrefix(line, "+++ "):
			file = ""
			if name := unquote(strings.TrimPrefix(line, "+++ ")); name != "/dev/null" {
				file = strings.TrimPrefix(name, "b/")
				touch(file)
			}
		case strings.HasPrefix(line, "@@ ") && file != "":
			if r, ok := hunkRange(line); ok {
				out[file] = append(out[file], r)
			}
		}
	}
	return out
}

// gitPaths reads the two paths of a "diff --git a/P b/Q" line, quoted or
// not, without their a/ and b/.
func gitPaths(rest string) []string {
	var a, b string
	if strings.HasPrefix(rest, `"`) || strings.HasSuffix(rest, `"`) {
		i := strings.LastIndex(rest[:len(rest)-1], ` "`)
		if strings.HasPrefix(rest, `"`) && !strings.HasSuffix(rest, `"`) {
			i = strings.Index(rest, `" `) + 1
		}
		if i <= 0 {
			return nil
		}
		a, b = unquote(rest[:i]), unquote(rest[i+1:])
	} else if n := len(rest); n%2 == 1 && rest[:n/2][2:] == rest[n/2+1:][2:] {
		a, b = rest[:n/2], rest[n/2+1:]
	} else if i := strings.LastIndex(rest, " b/"); i > 0 {
		a, b = rest[:i], rest[i+1:]
	} else {
		return nil
	}
	return []string{strings.TrimPrefix(a, "a/"), strings.TrimPrefix(b, "b/")}
}

func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}

// hunkRange reads the new side of a hunk header: "@@ -a,b +c,d @@".
func hunkRange(header string) (lineRange, bool) {
	fields := strings.Fields(header)
	if len(fields) < 3 || !strings.HasPrefix(fields[2], "+") {
		return lineRange{}, false
	}
	start, count, found := strings.Cut(fields[2][1:], ",")
	c, n := 1, 0
	var err error
	if n, err = strconv.Atoi(start); err != nil {
		return lineRange{}, false
	}
	if found {
		if c, err = strconv.Atoi(count); err != nil {
			return lineRange{}, false
		}
	}
	if c == 0 {
		// Lines were deleted after line n: both neighbours changed.
		return lineRange{n, n + 1}, true
	}
	return lineRange{n, n + c - 1}, true
}

// SelectSince returns what the changed lines touch in the checkout src:
// the defects whose site's declaration holds a changed line, and the
// probes whose files changed.
func SelectSince(src fs.FS, rev string, changed map[string][]lineRange, u Universe) (*Since, error) {
	s := &Since{Rev: rev, Sites: map[string]bool{}, Probes: map[string]bool{}}
	for _, d := range u.defects() {
		ranges, ok := changed[d.Site]
		if !ok {
			continue
		}
		spans, err := siteSpans(src, d)
		if err != nil {
			return nil, err
		}
		for _, sp := range spans {
			if overlaps(ranges, sp) {
				s.Sites[string(d.ID)] = true
			}
		}
	}
	all := slices.ContainsFunc(slices.Collect(maps.Keys(changed)), func(f string) bool { return under(f, machineryPaths) })
	for _, pkg := range probePackages {
		ids := u.Checks
		if pkg.dir == "attacks" {
			ids = u.Attacks
		}
		sp, err := pkg.split(src, ids)
		if err != nil {
			return nil, fmt.Errorf("finding %s' files: %w", pkg.dir, err)
		}
		shared := sp.shared
		owner := map[string]string{}
		for id, files := range sp.own {
			for _, f := range files {
				owner[f] = id
			}
		}
		every := all
		for f := range changed {
			id, isOwn := owner[f]
			switch {
			case isOwn:
				s.Probes[probeKey(pkg.dir, id)] = true
			case slices.Contains(shared, f):
				every = true
			case path.Dir(f) == pkg.dir && !strings.HasSuffix(f, "_test.go"):
				// Not in the package now: a deleted file, a helper
				// perhaps; every probe of the package.
				every = true
			}
		}
		for _, id := range ids {
			if every || s.Probes[probeKey(pkg.dir, id)] {
				s.Probes[probeKey(pkg.dir, id)] = true
			}
		}
	}
	return s, nil
}

func overlaps(ranges []lineRange, sp lineRange) bool {
	for _, r := range ranges {
		if r.from <= sp.to && sp.from <= r.to {
			return true
		}
	}
	return false
}

// siteSpans returns the lines of each top-level declaration of d's site
// file that holds a planted site of d.
func siteSpans(src fs.FS, d mutants.Defect) ([]lineRange, error) {
	sites, err := gosource.Locate(src, d.Site, string(d.ID))
	if err != nil {
		return nil, err
	}
	var out []lineRange
	for _, s := range sites {
		if r := (lineRange{s.Decl.From, s.Decl.To}); !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// filter keeps of run the defects the diff touches: their site changed,
// or a probe that changed reaches it (in base's coverage), and returns
// the report's account of the partial run, of all the defects the run
// had (list: run, and those of a suite whose baseline is broken).
func (s *Since) filter(list, run []mutants.Defect, probes []Probe, base *baseRun) ([]mutants.Defect, *report.Partial) {
	p := &report.Partial{Since: s.Rev, Sites: []string{}, Probes: []string{}, Of: len(list)}
	seen := map[string]bool{}
	for _, pr := range probes {
		pkg, id := probeInputKey(pr)
		if k := probeKey(pkg, id); s.Probes[k] && !seen[k] {
			seen[k] = true
			p.Probes = append(p.Probes, k)
		}
	}
	for _, d := range list {
		if s.Sites[string(d.ID)] {
			p.Sites = append(p.Sites, string(d.ID))
		}
	}
	var out []mutants.Defect
	for _, d := range run {
		keep := s.Sites[string(d.ID)]
		for _, pr := range probes {
			pkg, id := probeInputKey(pr)
			keep = keep || (pr.Suite == d.Suite.OrCourse() && s.Probes[probeKey(pkg, id)] && base.reaches(pr.ID, d.ID))
		}
		if keep {
			out = append(out, d)
		}
	}
	return out, p
}

// under reports whether file is one of paths or below one of them.
func under(file string, paths []string) bool {
	for _, p := range paths {
		if file == p || strings.HasPrefix(file, p+"/") {
			return true
		}
	}
	return false
}
