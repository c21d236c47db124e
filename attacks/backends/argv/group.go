package argv

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Kind says what a group is, for the operators and the reports.
type Kind string

// The kinds of group. The first five are fixed: no operator touches them.
const (
	// Program is the sandbox's executable.
	Program Kind = "program"
	// Subcommand is a verb of the tool (runsc do, podman run).
	Subcommand Kind = "subcommand"
	// Image is podman's image, or its root file system with --rootfs.
	Image Kind = "image"
	// End is "--", the end of the tool's options.
	End Kind = "end"
	// Command is the words after the end of the options: a command the
	// prefix runs the program through.
	Command Kind = "command"

	// Flag is an option and its arguments.
	Flag Kind = "flag"
	// ReadOnly is a read-only bind or mount that has a writable spelling.
	ReadOnly Kind = "read-only"
	// Namespaces is an option that makes namespaces.
	Namespaces Kind = "namespaces"
	// Lifetime ties the program's life to the sandbox's or its caller's
	// (--die-with-parent, --new-session, --kill-child).
	Lifetime Kind = "lifetime"
)

// Fixed reports whether no operator touches a group of this kind.
func (k Kind) Fixed() bool {
	switch k {
	case Program, Subcommand, Image, End, Command:
		return true
	}
	return false
}

// Group is an option and the words it takes: what a mutant removes or
// rewrites as one.
type Group struct {
	// Index is the group's place among the command's groups, from 0 (the
	// executable).
	Index int `json:"index"`
	// Start is the index of its first word in the command.
	Start int `json:"start"`
	// Words are its words as the command spells them.
	Words []string `json:"words"`
	// Kind says what it is.
	Kind Kind `json:"kind"`
	// Namespaces are the namespaces it makes, when it makes several that
	// can be dropped one at a time (bwrap's --unshare-all, unshare's -Umpf).
	Namespaces []string `json:"namespaces,omitempty"`
	// Writable is what a read-only group a profile spells becomes when
	// made writable (the tools' groups have tables for it).
	Writable []string `json:"writable,omitempty"`
}

// Text is the group's words, separated by spaces.
func (g Group) Text() string { return strings.Join(g.Words, " ") }

// Ungrouped is a word the tables could not group, and why. It and the
// words after it up to the next group stay in every mutant as they are.
type Ungrouped struct {
	// Word is its index in the command; Text the word.
	Word int    `json:"word"`
	Text string `json:"text"`
	Why  string `json:"why"`
}

// Grouping is a command read as its tool reads it.
type Grouping struct {
	// Tool is the table the words were read with (bwrap, firejail, runsc,
	// unshare, podman), "groups" for the groups a profile spells, or ""
	// when the tool has no table.
	Tool      string      `json:"tool"`
	Command   []string    `json:"command"`
	Groups    []Group     `json:"groups"`
	Ungrouped []Ungrouped `json:"ungrouped"`
}

// Tools lists the tools that have arity tables.
func Tools() []string { return []string{"bwrap", "firejail", "podman", "runsc", "unshare"} }

// Split reads command (a profile's prefix, placeholders unexpanded) with
// the table of its executable's tool. A command whose tool has no table
// has the executable as its one group and every other word ungrouped.
func Split(command []string) (*Grouping, error) {
	if len(command) == 0 {
		return nil, fmt.Errorf("an empty command")
	}
	tool := filepath.Base(command[0])
	p := &parser{words: command, g: &Grouping{Tool: tool, Command: command, Groups: []Group{}, Ungrouped: []Ungrouped{}}}
	p.add(1, Program)
	switch tool {
	case "bwrap":
		p.bwrap()
	case "firejail":
		p.firejail()
	case "unshare":
		p.unshare()
	case "runsc":
		p.goFlags(runscGlobal, "the runsc global option")
		p.runscDo()
	case "podman":
		p.podman()
	default:
		p.g.Tool = ""
		p.rest(fmt.Sprintf("no arity table for %s (tables: %s): spell the profile's groups in YAML", tool, strings.Join(Tools(), ", ")))
	}
	return p.g, nil
}

// parser walks the words of a command, making groups.
type parser struct {
	words []string
	i     int // the next word
	g     *Grouping
	// pending are modifier words (bwrap's --perms 0700) that join the
	// next group.
	pending int
}

func (p *parser) done() bool { return p.i >= len(p.words) }

func (p *parser) word() string { return p.words[p.i] }

// add makes a group of the next n words (and any pending modifier).
func (p *parser) add(n int, k Kind, ns ...string) {
	start := p.i - p.pending
	p.g.Groups = append(p.g.Groups, Group{Index: len(p.g.Groups), Start: start,
		Words: append([]string{}, p.words[start:p.i+n]...), Kind: k, Namespaces: ns})
	p.i += n
	p.pending = 0
}

// rest reports every word left as ungrouped, the first with why.
func (p *parser) rest(why string) {
	for p.i -= p.pending; p.i < len(p.words); p.i++ {
		w := Ungrouped{Word: p.i, Text: p.words[p.i], Why: why}
		if len(p.g.Ungrouped) > 0 && p.g.Ungrouped[len(p.g.Ungrouped)-1].Word == p.i-1 {
			w.Why = "follows an ungrouped word"
		}
		p.g.Ungrouped = append(p.g.Ungrouped, w)
	}
	p.pending = 0
}

// take groups the option at the next word and its n arguments, or
// reports it when the command ends before them.
func (p *parser) take(n int, k Kind, ns ...string) bool {
	if p.i+n >= len(p.words) {
		p.rest(fmt.Sprintf("%s takes %d argument(s), and the prefix ends before them", p.word(), n))
		return false
	}
	p.add(n+1, k, ns...)
	return true
}

// endOfOptions groups "--" and, after it, the command words as one
// fixed group each.
func (p *parser) endOfOptions() {
	if !p.done() && p.word() == "--" {
		p.add(1, End)
	}
	if !p.done() {
		p.add(len(p.words)-p.i, Command)
	}
}
