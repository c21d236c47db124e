package argv

import (
	"fmt"
	"slices"
	"strings"
)

// The operators. A mutant applies one to one group; a pair applies two
// survivors' edits together.
const (
	// Remove takes the group away (for a lifetime group, the removal of
	// --die-with-parent, --new-session or --kill-child).
	Remove = "remove"
	// Writable spells a read-only bind as its writable twin.
	Writable = "writable"
	// SharePrefix begins the operator that drops one namespace from a
	// group that makes several, or sets a namespace mode to the host's:
	// share-net, share-pid, ...
	SharePrefix = "share-"
)

// Edit replaces one group's words.
type Edit struct {
	Group    int      `json:"group"`
	Operator string   `json:"operator"`
	Words    []string `json:"words"` // what the group becomes (none: removed)
}

// Mutant is the command with one edit, or two (a pair).
type Mutant struct {
	// ID is stable across runs and edits elsewhere in the file: the
	// profile, the group's index and words, the operator; a pair joins
	// its two mutants' parts with '+'.
	ID          string   `json:"id"`
	Edits       []Edit   `json:"edits"`
	Command     []string `json:"command"`
	Description string   `json:"description"`
}

// Groups lists the groups the mutant edits.
func (m Mutant) Groups() []int {
	var out []int
	for _, e := range m.Edits {
		out = append(out, e.Group)
	}
	return out
}

// Operator is the mutant's operator ("a+b" for a pair).
func (m Mutant) Operator() string {
	var ops []string
	for _, e := range m.Edits {
		ops = append(ops, e.Operator)
	}
	return strings.Join(ops, "+")
}

// Mutants returns every mutant of g, group by group in command order:
// each mutable group removed, then its other operators. A mutant whose
// command equals the unmutated one or an earlier mutant's is left out
// (bwrap's --unshare-net removed is the net namespace dropped).
func Mutants(profile string, g *Grouping) []Mutant {
	var out []Mutant
	seen := map[string]bool{strings.Join(g.Command, "\x00"): true}
	for _, gr := range g.Groups {
		if gr.Kind.Fixed() {
			continue
		}
		for _, e := range edits(g.Tool, gr) {
			m := g.apply(profile, []Edit{e})
			if key := strings.Join(m.Command, "\x00"); !seen[key] {
				seen[key] = true
				out = append(out, m)
			}
		}
	}
	return out
}

// Pair returns the mutant that applies a's and b's edits together (on
// other groups).
func Pair(profile string, g *Grouping, a, b Mutant) (Mutant, error) {
	for _, e := range a.Edits {
		if slices.Contains(b.Groups(), e.Group) {
			return Mutant{}, fmt.Errorf("%s and %s edit the same group", a.ID, b.ID)
		}
	}
	return g.apply(profile, append(slices.Clone(a.Edits), b.Edits...)), nil
}

// apply builds the mutant of edits.
func (g *Grouping) apply(profile string, edits []Edit) Mutant {
	by := map[int]Edit{}
	for _, e := range edits {
		by[e.Group] = e
	}
	var cmd []string
	next := 0 // the next word not yet copied
	for _, gr := range g.Groups {
		cmd = append(cmd, g.Command[next:gr.Start]...) // ungrouped words before it
		next = gr.Start + len(gr.Words)
		if e, ok := by[gr.Index]; ok {
			cmd = append(cmd, e.Words...)
		} else {
			cmd = append(cmd, gr.Words...)
		}
	}
	cmd = append(cmd, g.Command[next:]...)
	var ids, descs []string
	for _, e := range edits {
		gr := g.Groups[e.Group]
		ids = append(ids, fmt.Sprintf("%d:%s:%s", gr.Index, gr.Text(), e.Operator))
		if e.Operator == Remove {
			descs = append(descs, "remove "+gr.Text())
		} else {
			descs = append(descs, fmt.Sprintf("%s: %s becomes %s", e.Operator, gr.Text(), strings.Join(e.Words, " ")))
		}
	}
	return Mutant{ID: profile + ":" + strings.Join(ids, "+"), Edits: edits, Command: cmd, Description: strings.Join(descs, "; ")}
}

// edits are the operators' edits of one group: removed, then writable,
// then each namespace dropped.
func edits(tool string, gr Group) []Edit {
	out := []Edit{{Group: gr.Index, Operator: Remove, Words: []string{}}}
	if w, ok := writable(tool, gr); ok {
		out = append(out, Edit{Group: gr.Index, Operator: Writable, Words: w})
	}
	for _, ns := range gr.Namespaces {
		if w, ok := dropNamespace(tool, gr, ns); ok {
			out = append(out, Edit{Group: gr.Index, Operator: SharePrefix + ns, Words: w})
		}
	}
	if tool == "podman" || tool == "runsc" {
		if w, ok := hostMode(tool, gr); ok && gr.Kind == Namespaces {
			out = append(out, Edit{Group: gr.Index, Operator: SharePrefix + gr.Namespaces[0], Words: w})
		}
	}
	return out
}

// writable returns a read-only group's writable spelling.
func writable(tool string, gr Group) ([]string, bool) {
	if gr.Kind != ReadOnly {
		return nil, false
	}
	if len(gr.Writable) > 0 {
		return slices.Clone(gr.Writable), true
	}
	w := slices.Clone(gr.Words)
	last := len(w) - 1
	switch tool {
	case "bwrap":
		for i, word := range w {
			if twin, ok := bwrapWritable[word]; ok {
				w[i] = twin
				return w, true
			}
		}
	case "firejail":
		if rest, ok := strings.CutPrefix(w[0], "--read-only="); ok {
			return []string{"--read-write=" + rest}, true
		}
	case "runsc":
		name, _, _ := strings.Cut(strings.TrimLeft(w[0], "-"), "=")
		switch {
		case name == "force-overlay" && !strings.HasSuffix(w[0], "=false"):
			return []string{"-force-overlay=false"}, true
		case name == "overlay2" && !strings.HasSuffix(w[last], "none"):
			return []string{"--overlay2=none"}, true
		}
	case "podman":
		return podmanWritable(w)
	}
	return nil, false
}

// podmanWritable drops the read-only option of a volume (SRC:DST:ro,z)
// or a mount (type=bind,...,ro / readonly=true).
func podmanWritable(w []string) ([]string, bool) {
	val, attached := w[len(w)-1], false
	prefix := ""
	if len(w) == 1 {
		var ok bool
		prefix, val, ok = strings.Cut(w[0], "=")
		if !ok {
			return nil, false
		}
		prefix, attached = prefix+"=", true
	}
	mount := strings.HasPrefix(w[0], "--mount")
	var kept []string
	changed := false
	if mount {
		for _, o := range strings.Split(val, ",") {
			if o == "ro" || o == "readonly" || o == "ro=true" || o == "readonly=true" {
				changed = true
				continue
			}
			kept = append(kept, o)
		}
		val = strings.Join(kept, ",")
	} else {
		parts := strings.Split(val, ":")
		if len(parts) < 3 {
			return nil, false
		}
		for _, o := range strings.Split(parts[len(parts)-1], ",") {
			if o == "ro" {
				changed = true
				continue
			}
			kept = append(kept, o)
		}
		parts = parts[:len(parts)-1]
		if len(kept) > 0 {
			parts = append(parts, strings.Join(kept, ","))
		}
		val = strings.Join(parts, ":")
	}
	if !changed {
		return nil, false
	}
	if attached {
		return []string{prefix + val}, true
	}
	out := slices.Clone(w)
	out[len(out)-1] = val
	return out, true
}

// dropNamespace returns a group that makes several namespaces without
// ns, spelled as the tool allows.
func dropNamespace(tool string, gr Group, ns string) ([]string, bool) {
	switch {
	case tool == "bwrap" && gr.Words[len(gr.Words)-1] == "--unshare-all":
		head := gr.Words[:len(gr.Words)-1]
		if ns == "net" {
			return append(slices.Clone(head), "--unshare-all", "--share-net"), true
		}
		out := slices.Clone(head)
		for _, a := range bwrapAllNamespaces {
			if a.ns != ns {
				out = append(out, a.flag)
			}
		}
		return out, true
	case tool == "unshare" && len(gr.Words[0]) > 2 && gr.Words[0][1] != '-':
		for j := 1; j < len(gr.Words[0]); j++ {
			if o := unshareLong[unshareShort[gr.Words[0][j]]]; len(o.ns) == 1 && o.ns[0] == ns {
				w := slices.Clone(gr.Words)
				w[0] = gr.Words[0][:j] + gr.Words[0][j+1:]
				return w, true
			}
		}
	}
	return nil, false
}

// hostMode returns a namespace option of podman or runsc set to the
// host's namespace (--network=host), unless it is already.
func hostMode(tool string, gr Group) ([]string, bool) {
	if len(gr.Namespaces) != 1 {
		return nil, false
	}
	name, val, eq := strings.Cut(gr.Words[0], "=")
	if !eq {
		val = gr.Words[len(gr.Words)-1]
	}
	if val == "host" {
		return nil, false
	}
	if tool == "podman" && strings.HasPrefix(name, "--net") {
		name = "--network"
	}
	return []string{name + "=host"}, true
}
