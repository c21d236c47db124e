package argv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Span is where something is written: lines and columns from 1, columns
// in UTF-16 code units (as SARIF and Stryker's schema count them), the end
// exclusive.
type Span struct {
	StartLine   int `json:"start_line"`
	StartColumn int `json:"start_column"`
	EndLine     int `json:"end_line"`
	EndColumn   int `json:"end_column"`
}

// Join spans from the start of a to the end of b.
func Join(a, b Span) Span {
	return Span{StartLine: a.StartLine, StartColumn: a.StartColumn, EndLine: b.EndLine, EndColumn: b.EndColumn}
}

// Located is where a profile is written in its file.
type Located struct {
	// Entry is the line of the profile's entry (its "- name:" item).
	Entry int
	// Command spans the command's value; Words each of its words.
	Command Span
	Words   []Span
}

// GroupSpan spans a group's words (zero when words is short of them).
func (l *Located) GroupSpan(g Group) Span {
	if l == nil || g.Start+len(g.Words) > len(l.Words) || len(g.Words) == 0 {
		return Span{}
	}
	return Join(l.Words[g.Start], l.Words[g.Start+len(g.Words)-1])
}

// LocateProfile finds the profile name in a profiles file's bytes (the
// first YAML document, as backends.Decode reads it).
func LocateProfile(data []byte, name string) (*Located, error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("reading the profiles file: %w", err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	for _, entry := range mapValue(docRoot(&doc), "profiles").Content {
		if n := mapValue(entry, "name"); n.Value != name {
			continue
		}
		cmd := mapValue(entry, "command")
		if cmd.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("profile %s: its command is not a list", name)
		}
		l := &Located{Entry: entry.Line}
		for _, w := range cmd.Content {
			l.Words = append(l.Words, scalarSpan(lines, w))
		}
		if len(l.Words) > 0 {
			open := scalarSpan(lines, cmd)
			l.Command = Join(Span{StartLine: open.StartLine, StartColumn: open.StartColumn}, l.Words[len(l.Words)-1])
			if cmd.Style&yaml.FlowStyle != 0 {
				l.Command = closeFlow(lines, l.Command)
			}
		}
		return l, nil
	}
	return nil, fmt.Errorf("no profile %s in the file", name)
}

// docRoot is a document's top node.
func docRoot(doc *yaml.Node) *yaml.Node {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		return doc.Content[0]
	}
	return doc
}

// mapValue returns the value of key in mapping n (an empty node when
// there is none).
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i+1]
			}
		}
	}
	return &yaml.Node{}
}

// scalarSpan spans a node as it is written: yaml gives where it starts
// (its column counted in characters); its end is found by reading the
// line: a quoted scalar to its closing quote, a plain one in a flow list
// to the ',' or ']' after it.
func scalarSpan(lines []string, n *yaml.Node) Span {
	if n.Line < 1 || n.Line > len(lines) {
		return Span{}
	}
	line := strings.TrimRight(lines[n.Line-1], "\r\n")
	start := byteOffset(line, n.Column-1)
	end := len(line)
	switch {
	case start < len(line) && (line[start] == '"' || line[start] == '\''):
		q := line[start]
		for j := start + 1; j < len(line); j++ {
			if q == '"' && line[j] == '\\' {
				j++
				continue
			}
			if line[j] == q {
				if q == '\'' && j+1 < len(line) && line[j+1] == '\'' { // '' is a quote
					j++
					continue
				}
				end = j + 1
				break
			}
		}
	case n.Kind == yaml.ScalarNode:
		if j := strings.IndexAny(line[start:], ",]}#"); j >= 0 {
			end = start + j
		}
		end = start + len(strings.TrimRight(line[start:end], " \t"))
	default:
		end = start + 1
	}
	return Span{StartLine: n.Line, StartColumn: utf16Col(line, start), EndLine: n.Line, EndColumn: utf16Col(line, end)}
}

// closeFlow extends a flow list's span to its closing ']'.
func closeFlow(lines []string, s Span) Span {
	for ln := s.EndLine; ln <= len(lines); ln++ {
		line := strings.TrimRight(lines[ln-1], "\r\n")
		from := 0
		if ln == s.EndLine {
			from = byteOffsetUTF16(line, s.EndColumn-1)
		}
		if j := strings.IndexByte(line[from:], ']'); j >= 0 {
			return Span{StartLine: s.StartLine, StartColumn: s.StartColumn, EndLine: ln, EndColumn: utf16Col(line, from+j+1)}
		}
	}
	return s
}

// byteOffset is the byte offset of the n-th character of line.
func byteOffset(line string, n int) int {
	off := 0
	for ; n > 0 && off < len(line); n-- {
		_, size := utf8.DecodeRuneInString(line[off:])
		off += size
	}
	return off
}

// byteOffsetUTF16 is the byte offset of UTF-16 column n (from 0) of line.
func byteOffsetUTF16(line string, n int) int {
	off := 0
	for _, r := range line {
		if n <= 0 {
			return off
		}
		n -= len(utf16.Encode([]rune{r}))
		off += utf8.RuneLen(r)
	}
	return off
}

// utf16Col is the 1-based UTF-16 column of byte offset off of line.
func utf16Col(line string, off int) int {
	return len(utf16.Encode([]rune(line[:min(off, len(line))]))) + 1
}

// LocateWords spans each word of a prefix given on the command line
// (custom:PREFIX), split as backends.SplitWords splits it: blanks
// separate words, quotes and backslashes keep what they hold.
func LocateWords(text string) []Span {
	var out []Span
	line, col := 1, 1 // where the next character is
	inWord := false
	var cur Span
	quote := rune(0)
	escaped := false
	for _, r := range text {
		startsWord := !inWord && quote == 0 && !escaped && r != ' ' && r != '\t' && r != '\n'
		if startsWord {
			inWord, cur = true, Span{StartLine: line, StartColumn: col}
		}
		switch {
		case escaped:
			escaped = false
		case quote != 0:
			if r == quote {
				quote = 0
			} else if r == '\\' && quote == '"' {
				escaped = true
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '\\':
			escaped = true
		case inWord && (r == ' ' || r == '\t' || r == '\n'):
			cur.EndLine, cur.EndColumn = line, col
			out, inWord = append(out, cur), false
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col += len(utf16.Encode([]rune{r}))
		}
	}
	if inWord {
		cur.EndLine, cur.EndColumn = line, col
		out = append(out, cur)
	}
	return out
}

// groupsFile is the optional second YAML document of a profiles file:
// the groups of profiles whose tool has no arity table (or whose table
// should not be used), by profile name. It is a document of its own so
// that the profiles file's strict decoding, which reads the first, is
// untouched.
type groupsFile struct {
	Groups map[string][]GroupSpec `yaml:"groups"`
}

// GroupSpec is one group a profile spells: its words, and optionally its
// kind (flag by default; read-only with writable, the words it becomes).
type GroupSpec struct {
	Words    []string `yaml:"words"`
	Kind     Kind     `yaml:"kind"`
	Writable []string `yaml:"writable"`
}

// UnmarshalYAML reads a group spelled as a plain list of words, or as a
// mapping with words, kind and writable.
func (g *GroupSpec) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.SequenceNode {
		return n.Decode(&g.Words)
	}
	type plain GroupSpec
	return n.Decode((*plain)(g))
}

// DecodeGroups reads the groups document of a profiles file, if it has
// one (nil when it has none).
func DecodeGroups(data []byte) (map[string][]GroupSpec, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var skip yaml.Node
	if err := dec.Decode(&skip); err != nil {
		return nil, nil // the profiles' own decoding says what is wrong
	}
	dec.KnownFields(true)
	var f groupsFile
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, fmt.Errorf("the groups document: %w", err)
	}
	return f.Groups, nil
}

// Explicit reads command with the groups a profile spells: each group's
// words must follow the previous group's in the command; the executable
// is group 0 when no group names it. A word no group covers is reported.
func Explicit(command []string, specs []GroupSpec) (*Grouping, error) {
	g := &Grouping{Tool: "groups", Command: command, Groups: []Group{}, Ungrouped: []Ungrouped{}}
	if len(command) == 0 {
		return nil, errors.New("an empty command")
	}
	next := 0
	if len(specs) == 0 || !slices.Equal(specs[0].Words, command[:min(len(specs[0].Words), len(command))]) {
		g.Groups = append(g.Groups, Group{Index: 0, Start: 0, Words: command[:1], Kind: Program})
		next = 1
	}
	for _, s := range specs {
		at := indexFrom(command, s.Words, next)
		if at < 0 {
			return nil, fmt.Errorf("group %q is not in the command after word %d", strings.Join(s.Words, " "), next)
		}
		for ; next < at; next++ {
			g.Ungrouped = append(g.Ungrouped, Ungrouped{Word: next, Text: command[next], Why: "no group of the profile's groups holds it"})
		}
		kind := s.Kind
		switch {
		case kind == "":
			kind = Flag
		case kind == ReadOnly && len(s.Writable) == 0:
			return nil, fmt.Errorf("group %q: read-only needs writable: the words it becomes", strings.Join(s.Words, " "))
		case !slices.Contains([]Kind{Flag, ReadOnly, Lifetime, Namespaces, End, Command, Program, Subcommand, Image}, kind):
			return nil, fmt.Errorf("group %q: unknown kind %q", strings.Join(s.Words, " "), kind)
		}
		g.Groups = append(g.Groups, Group{Index: len(g.Groups), Start: at, Words: s.Words, Kind: kind, Writable: s.Writable})
		next = at + len(s.Words)
	}
	for ; next < len(command); next++ {
		g.Ungrouped = append(g.Ungrouped, Ungrouped{Word: next, Text: command[next], Why: "no group of the profile's groups holds it"})
	}
	return g, nil
}

// indexFrom is the index of words in command at or after from, or -1.
func indexFrom(command, words []string, from int) int {
	if len(words) == 0 {
		return -1
	}
	for i := from; i+len(words) <= len(command); i++ {
		if slices.Equal(command[i:i+len(words)], words) {
			return i
		}
	}
	return -1
}
