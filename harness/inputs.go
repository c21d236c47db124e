package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"sandboxlab/harness/gosource"
	"sandboxlab/report"
)

// What a verdict depends on, as digests, for mutate --incremental.
//
// A probe's verdict, on the correct sandbox or with a defect on, is what
// its worker saw. The worker runs:
//   - the library, end to end: every probe goes through Run, the
//     re-executed init and the supervisor, and nothing records which of
//     the library's functions a probe executes (coverage records the
//     planted sites only). So the library is one unit: a change anywhere
//     in sandbox/ can change what any probe sees, with any defect on, and
//     reruns them all. A finer unit is not sound here: a defect planted in
//     sandbox/egress/rules.go is caught by checks whose programs run
//     through run.go's network set-up, so an edit of run.go can change
//     what they see with that defect on, though its site is untouched;
//   - the machinery: the gate and coverage (mutants), the vocabulary
//     (verdict), the worker (harness's worker.go, probe.go, jail.go), the
//     result model the measured facts are kept in and read back through
//     (report's model.go and mutation.go), and go.mod;
//   - its own files: checks/<id>.go; attacks/<id>.go and the program
//     attacks/programs/<id>.py;
//   - the files its package's probes share (the package's other files,
//     and the module's packages it imports that no other group covers);
//   - the environment (Fingerprint).
//
// Judging is redone by every run from the measured facts: predictions,
// the runner's diff, the renderers and their templates are no input. A
// probe's own file that anything but itself refers to (but a registry's
// list of probes) counts as shared, so a helper one check declares and
// another calls cannot change the second check unseen.

// The shared groups.
const (
	groupLibrary   = "library"
	groupMachinery = "machinery"
)

var (
	libraryPaths   = []string{"sandbox"}
	machineryPaths = []string{"mutants", "verdict", "go.mod", "harness/worker.go", "harness/probe.go", "harness/jail.go",
		"report/model.go", "report/mutation.go"}
	// coveredDirs are the module's directories (and those below) that
	// importing adds nothing for to a group: the library and the
	// machinery are groups of their own (as the probe packages are, which
	// the worker imports). Of report, probes use only the types of the
	// model, which machinery digests.
	coveredDirs = []string{"sandbox", "mutants", "verdict", "report"}
)

const modulePrefix = "sandboxlab/"

// probePackage is a package of probes: its directory and its probes' own
// files.
type probePackage struct {
	dir string
	own func(id string) []string
}

var probePackages = []probePackage{
	{dir: "checks", own: func(id string) []string { return []string{"checks/" + id + ".go"} }},
	{dir: "attacks", own: func(id string) []string { return []string{"attacks/" + id + ".go", "attacks/programs/" + id + ".py"} }},
}

// probeKey is the key of Inputs.Probes for a check's or an attack's id.
func probeKey(dir, id string) string { return dir + "/" + id }

// ComputeInputs digests what the verdicts of u's probes depend on, from
// src (the sources built into the binary, sandboxlab.Sources; a test
// gives a tree of its own) and env (HostFingerprint; a test gives its
// own).
func ComputeInputs(src fs.FS, env Fingerprint, u Universe) (*report.Inputs, error) {
	in := &report.Inputs{Shared: map[string]string{}, Probes: map[string]string{}, Environment: map[string]string{}}
	for k, v := range env {
		in.Environment[k] = v
	}
	for name, paths := range map[string][]string{groupLibrary: libraryPaths, groupMachinery: machineryPaths} {
		files, err := expand(src, paths)
		if err != nil {
			return nil, err
		}
		// A package of the module the group imports that no group
		// covers (none today) is part of it.
		imported, err := importClosure(src, files)
		if err != nil {
			return nil, err
		}
		files = append(files, imported...)
		slices.Sort(files)
		files = slices.Compact(files)
		if in.Shared[name], err = digest(src, files); err != nil {
			return nil, err
		}
	}
	for _, pkg := range probePackages {
		ids := u.Checks
		if pkg.dir == "attacks" {
			ids = u.Attacks
		}
		sp, err := pkg.split(src, ids)
		if err != nil {
			return nil, fmt.Errorf("digesting %s: %w", pkg.dir, err)
		}
		if in.Shared[pkg.dir], err = digestShared(src, sp); err != nil {
			return nil, err
		}
		for _, id := range ids {
			if in.Probes[probeKey(pkg.dir, id)], err = digest(src, sp.own[id]); err != nil {
				return nil, err
			}
		}
	}
	return in, nil
}

// digest is the digest of files, in order: each one's path, length and
// bytes.
func digest(src fs.FS, files []string) (string, error) {
	h := sha256.New()
	for _, f := range files {
		b, err := fs.ReadFile(src, f)
		if err != nil {
			return "", fmt.Errorf("digesting %s: %w", f, err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(b))
		h.Write(b)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// expand lists the files of paths, sorted: a file as it is, a directory
// with everything below it but tests and test data. A path src lacks is
// an error: what is not there cannot be vouched for.
func expand(src fs.FS, paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		err := fs.WalkDir(src, p, func(f string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && d.Name() == "testdata":
				return fs.SkipDir
			case !d.IsDir() && !strings.HasSuffix(f, "_test.go"):
				out = append(out, f)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("the sources lack %s: %w", p, err)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// packageFiles lists the files of the package in dir, sorted: its own
// files and those of its subdirectories that are not packages of their
// own (attacks/programs), but no tests or test data.
func packageFiles(src fs.FS, dir string) ([]string, error) {
	var out []string
	err := fs.WalkDir(src, dir, func(f string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if f != dir && (d.Name() == "testdata" || isPackage(src, f)) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(f, "_test.go") {
			out = append(out, f)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the sources lack %s: %w", dir, err)
	}
	slices.Sort(out)
	return out, nil
}

// isPackage reports whether dir holds Go files.
func isPackage(src fs.FS, dir string) bool {
	matches, _ := fs.Glob(src, path.Join(dir, "*.go"))
	return len(matches) > 0
}

// packageSplit is how a probe package's files divide: those its probes
// share, each probe's own, and in the shared ones the lists of probes
// (span offsets) that the digest leaves out.
type packageSplit struct {
	shared []string
	own    map[string][]string
	lists  map[string][]gosource.Span
}

// split divides pkg's files: those its probes share (its package's files
// but the probes' own, own files that others refer to, and the packages
// it imports that no group covers), and each probe's own files.
func (pkg probePackage) split(src fs.FS, ids []string) (packageSplit, error) {
	files, err := packageFiles(src, pkg.dir)
	if err != nil {
		return packageSplit{}, err
	}
	owner := map[string]string{}
	for _, id := range ids {
		for _, f := range pkg.own(id) {
			if slices.Contains(files, f) {
				owner[f] = id
			}
		}
	}
	referred, lists, err := gosource.SharedUse(src, pkg.dir, files, func(f string) bool { _, ok := owner[f]; return ok })
	if err != nil {
		return packageSplit{}, err
	}
	out := packageSplit{own: map[string][]string{}, lists: lists}
	for _, f := range files {
		if id, ok := owner[f]; ok && !referred[f] {
			out.own[id] = append(out.own[id], f)
		} else {
			out.shared = append(out.shared, f)
		}
	}
	imported, err := importClosure(src, files)
	if err != nil {
		return packageSplit{}, err
	}
	out.shared = append(out.shared, imported...)
	slices.Sort(out.shared)
	out.shared = slices.Compact(out.shared)
	return out, nil
}

// digestShared is digest of a package's shared files without the
// contents of its lists of probes: a registry lists which probes exist
// and in what order, which no probe's verdict depends on, so a check
// added to it runs alone (its own file is new), not with every other.
func digestShared(src fs.FS, sp packageSplit) (string, error) {
	h := sha256.New()
	for _, f := range sp.shared {
		b, err := fs.ReadFile(src, f)
		if err != nil {
			return "", fmt.Errorf("digesting %s: %w", f, err)
		}
		var kept []byte
		at := 0
		for _, l := range sp.lists[f] {
			kept = append(kept, b[at:l.From]...)
			at = l.To
		}
		kept = append(kept, b[at:]...)
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(kept))
		h.Write(kept)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// importClosure lists the files of the module's packages that files
// import, directly or not, besides those the shared groups cover.
func importClosure(src fs.FS, files []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	queue := slices.Clone(files)
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		if !strings.HasSuffix(f, ".go") {
			continue
		}
		b, err := fs.ReadFile(src, f)
		if err != nil {
			return nil, err
		}
		imports, err := gosource.Imports(f, b)
		if err != nil {
			return nil, err
		}
		for _, p := range imports {
			dir, ok := strings.CutPrefix(p, modulePrefix)
			if !ok || seen[dir] || covered(dir) || dir == path.Dir(f) {
				continue
			}
			seen[dir] = true
			more, err := packageFiles(src, dir)
			if err != nil {
				return nil, fmt.Errorf("%s imports %s: %w", f, p, err)
			}
			out = append(out, more...)
			queue = append(queue, more...)
		}
	}
	return out, nil
}

func covered(dir string) bool {
	for _, pkg := range probePackages {
		if dir == pkg.dir {
			return true
		}
	}
	for _, c := range coveredDirs {
		if dir == c || strings.HasPrefix(dir, c+"/") {
			return true
		}
	}
	return false
}
