package argv

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"sandboxlab/attacks/backends"
)

func texts(g *Grouping) []string {
	var out []string
	for _, gr := range g.Groups {
		out = append(out, gr.Text())
	}
	return out
}

func shipped(t *testing.T, name string) backends.Profile {
	t.Helper()
	for _, p := range backends.Shipped() {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no shipped profile %s", name)
	return backends.Profile{}
}

// TestSplitBubblewrap: the shipped bubblewrap profile reads as bwrap
// reads it, an option and its arguments to a group.
func TestSplitBubblewrap(t *testing.T) {
	g, err := Split(shipped(t, "bubblewrap").Command)
	assert.NilError(t, err)
	assert.DeepEqual(t, texts(g), []string{"bwrap", "--new-session", "--die-with-parent", "--unshare-net",
		"--ro-bind / /", "--bind {workdir} {workdir}", "--bind /tmp /tmp", "--tmpfs {home}/.ssh", "--dev /dev",
		"--unshare-pid", "--unshare-user", "--cap-drop ALL", "--proc /proc", "--chdir {workdir}", "--"})
	assert.Check(t, is.Len(g.Ungrouped, 0))
	assert.Check(t, is.Equal(g.Groups[1].Kind, Lifetime))
	assert.Check(t, is.Equal(g.Groups[4].Kind, ReadOnly))
}

// TestSplitShipped: every shipped profile's words are grouped by its
// tool's table, none left over; a profile whose tool has no table (runc,
// whose flags are in its spec; qemu) is reported word by word, never
// guessed.
func TestSplitShipped(t *testing.T) {
	for _, p := range backends.Shipped() {
		g, err := Split(p.Command)
		assert.NilError(t, err)
		if !slices.Contains(Tools(), filepath.Base(p.Command[0])) {
			assert.Check(t, is.Equal(g.Tool, ""), p.Name)
			assert.Check(t, is.Len(g.Ungrouped, len(p.Command)-1), p.Name)
			assert.Check(t, len(g.Ungrouped) > 0 && strings.Contains(g.Ungrouped[0].Why, "no arity table"), p.Name)
			continue
		}
		assert.Check(t, g.Tool != "", p.Name)
		assert.Check(t, is.Len(g.Ungrouped, 0), "%s: %+v", p.Name, g.Ungrouped)
		n := 0
		for _, gr := range g.Groups {
			assert.Check(t, is.Equal(gr.Start, n), "%s: group %d", p.Name, gr.Index)
			n += len(gr.Words)
		}
		assert.Check(t, is.Equal(n, len(p.Command)), p.Name)
	}
}

// TestUngroupedIsReported: an option the table does not know, and a
// --opt=value bwrap does not read, stop the grouping there, with why.
func TestUngroupedIsReported(t *testing.T) {
	g, err := Split([]string{"bwrap", "--unshare-net", "--frobnicate", "x", "--unshare-pid", "--"})
	assert.NilError(t, err)
	assert.DeepEqual(t, texts(g), []string{"bwrap", "--unshare-net"})
	assert.Check(t, is.Len(g.Ungrouped, 4))
	assert.Check(t, is.Contains(g.Ungrouped[0].Why, "--frobnicate is not in the arity table"))
	g, _ = Split([]string{"bwrap", "--chdir=/x", "--"})
	assert.Check(t, is.Contains(g.Ungrouped[0].Why, "bwrap reads no --opt=value"))
	g, _ = Split([]string{"mybox", "--strict", "--"})
	assert.Check(t, is.Equal(g.Tool, ""))
	assert.Check(t, is.Len(g.Ungrouped, 2))
	assert.Check(t, is.Len(Mutants("x", g), 0))
	g, _ = Split([]string{"bwrap", "--bind", "/a"})
	assert.Check(t, is.Contains(g.Ungrouped[0].Why, "takes 2 argument(s)"))
}

func mutantIDs(ms []Mutant) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// TestMutantsBubblewrap: every mutable group removed, the read-only root
// made writable; stable ids; the command of each is the original with
// the one edit.
func TestMutantsBubblewrap(t *testing.T) {
	p := shipped(t, "bubblewrap")
	g, _ := Split(p.Command)
	ms := Mutants("bubblewrap", g)
	ids := mutantIDs(ms)
	assert.Check(t, is.Len(ms, 14))
	assert.Check(t, is.Contains(ids, "bubblewrap:4:--ro-bind / /:writable"))
	assert.Check(t, is.Contains(ids, "bubblewrap:2:--die-with-parent:remove"))
	for _, m := range ms {
		if m.ID == "bubblewrap:4:--ro-bind / /:writable" {
			assert.Check(t, is.Equal(strings.Join(m.Command, " "), strings.Replace(strings.Join(p.Command, " "), "--ro-bind / /", "--bind / /", 1)))
		}
		if m.ID == "bubblewrap:3:--unshare-net:remove" {
			assert.Check(t, is.Equal(len(m.Command), len(p.Command)-1))
		}
	}
	pair, err := Pair("bubblewrap", g, ms[0], ms[2])
	assert.NilError(t, err)
	assert.Check(t, is.Equal(pair.ID, "bubblewrap:1:--new-session:remove+3:--unshare-net:remove"))
	assert.Check(t, is.Equal(len(pair.Command), len(p.Command)-2))
}

// TestDropNamespace: --unshare-all loses one namespace as bwrap allows
// it; a cluster of unshare's letters loses one; podman's and runsc's
// modes go to the host's; podman's read-only volume becomes writable.
func TestDropNamespace(t *testing.T) {
	byOp := func(cmd ...string) map[string]string {
		g, err := Split(cmd)
		assert.NilError(t, err)
		assert.Check(t, is.Len(g.Ungrouped, 0), "%+v", g.Ungrouped)
		out := map[string]string{}
		for _, m := range Mutants("p", g) {
			out[m.Edits[0].Operator+" "+g.Groups[m.Edits[0].Group].Text()] = strings.Join(m.Edits[0].Words, " ")
		}
		return out
	}
	bw := byOp("bwrap", "--unshare-all", "--ro-bind", "/", "/", "--")
	assert.Check(t, is.Equal(bw["share-net --unshare-all"], "--unshare-all --share-net"))
	assert.Check(t, is.Equal(bw["share-pid --unshare-all"], "--unshare-user-try --unshare-ipc --unshare-net --unshare-uts --unshare-cgroup-try"))
	assert.Check(t, is.Equal(bw["writable --ro-bind / /"], "--bind / /"))
	un := byOp("unshare", "-Urmpf", "--kill-child", "-w", "/x", "--net")
	assert.Check(t, is.Equal(un["share-pid -Urmpf"], "-Urmf"))
	assert.Check(t, is.Equal(un["share-user -Urmpf"], "-rmpf"))
	_, ok := un["remove -w /x"]
	assert.Check(t, ok)
	pm := byOp("podman", "--root", "/r", "run", "--rm", "--network=none", "-v", "/usr:/usr:ro", "--mount", "type=bind,src=/a,dst=/a,ro", "--pid", "private", "--rootfs", "/root", "sh")
	assert.Check(t, is.Equal(pm["share-net --network=none"], "--network=host"))
	assert.Check(t, is.Equal(pm["share-pid --pid private"], "--pid=host"))
	assert.Check(t, is.Equal(pm["writable -v /usr:/usr:ro"], "-v /usr:/usr"))
	assert.Check(t, is.Equal(pm["writable --mount type=bind,src=/a,dst=/a,ro"], "--mount type=bind,src=/a,dst=/a"))
	rs := byOp("runsc", "--rootless", "--network=none", "do", "-force-overlay", "-cwd", "/w", "--")
	assert.Check(t, is.Equal(rs["share-net --network=none"], "--network=host"))
	assert.Check(t, is.Equal(rs["writable -force-overlay"], "-force-overlay=false"))
	fj := byOp("firejail", "--read-only=/etc", "--net=none", "--")
	assert.Check(t, is.Equal(fj["writable --read-only=/etc"], "--read-write=/etc"))
}

// spanText is what span covers in text.
func spanText(text string, s Span) string {
	lines := strings.SplitAfter(text, "\n")
	var b strings.Builder
	for ln := s.StartLine; ln <= s.EndLine; ln++ {
		u := utf16.Encode([]rune(strings.TrimRight(lines[ln-1], "\n")))
		from, to := 0, len(u)
		if ln == s.StartLine {
			from = s.StartColumn - 1
		}
		if ln == s.EndLine {
			to = s.EndColumn - 1
		}
		b.WriteString(string(utf16.Decode(u[from:to])))
	}
	return b.String()
}

// TestLocateProfile: each word of every shipped profile is found where
// the file spells it (quotes and all).
func TestLocateProfile(t *testing.T) {
	data, err := os.ReadFile("../profiles.yaml")
	assert.NilError(t, err)
	for _, p := range backends.Shipped() {
		l, err := LocateProfile(data, p.Name)
		assert.NilError(t, err)
		assert.Assert(t, is.Len(l.Words, len(p.Command)), p.Name)
		for i, w := range p.Command {
			got := strings.Trim(spanText(string(data), l.Words[i]), `"'`)
			assert.Check(t, is.Equal(got, w), "%s word %d", p.Name, i)
		}
		assert.Check(t, strings.HasPrefix(spanText(string(data), l.Command), "["), p.Name)
		assert.Check(t, strings.HasSuffix(spanText(string(data), l.Command), "]"), p.Name)
	}
	_, err = LocateProfile(data, "nope")
	assert.Check(t, is.ErrorContains(err, "no profile nope"))
}

// TestLocateWords agrees with backends.SplitWords on where words are.
func TestLocateWords(t *testing.T) {
	for _, s := range []string{
		`bwrap --unshare-all --ro-bind / / --`,
		"bwrap  --setenv A 'two words'\n --chdir \"{workdir}\" a\\ b --",
		`firejail "--blacklist={home}" --net=none`,
	} {
		words, err := backends.SplitWords(s)
		assert.NilError(t, err)
		spans := LocateWords(s)
		assert.Assert(t, is.Len(spans, len(words)), s)
		for i, w := range words {
			raw := spanText(s, spans[i])
			unq, _ := backends.SplitWords(raw)
			assert.Check(t, is.DeepEqual(unq, []string{w}), "%q word %d: %q", s, i, raw)
		}
	}
}

// TestExplicitGroups: a profile's own groups, from the second document
// of its file; a word no group holds is reported.
func TestExplicitGroups(t *testing.T) {
	doc := []byte("version: 1\nprofiles: []\n---\ngroups:\n  box:\n    - [--a]\n    - {words: [--ro, /x], kind: read-only, writable: [--rw, /x]}\n    - {words: [--], kind: end}\n")
	specs, err := DecodeGroups(doc)
	assert.NilError(t, err)
	g, err := Explicit([]string{"box", "--a", "--odd", "--ro", "/x", "--"}, specs["box"])
	assert.NilError(t, err)
	assert.DeepEqual(t, texts(g), []string{"box", "--a", "--ro /x", "--"})
	assert.Check(t, is.Len(g.Ungrouped, 1))
	assert.Check(t, is.Equal(g.Ungrouped[0].Text, "--odd"))
	ms := Mutants("box", g)
	assert.DeepEqual(t, mutantIDs(ms), []string{"box:1:--a:remove", "box:2:--ro /x:remove", "box:2:--ro /x:writable"})
	assert.DeepEqual(t, ms[0].Command, []string{"box", "--odd", "--ro", "/x", "--"})
	assert.DeepEqual(t, ms[2].Command, []string{"box", "--a", "--odd", "--rw", "/x", "--"})
	_, err = Explicit([]string{"box", "--a"}, []GroupSpec{{Words: []string{"--b"}}})
	assert.Check(t, is.ErrorContains(err, "not in the command"))
	_, err = DecodeGroups([]byte("version: 1\n---\ngroups: {box: [[--a]]}\nextra: 1\n"))
	assert.Check(t, is.ErrorContains(err, "extra"))
	none, err := DecodeGroups([]byte("version: 1\nprofiles: []\n"))
	assert.NilError(t, err)
	assert.Check(t, is.Nil(none))
}
