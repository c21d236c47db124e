package tool

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"sandboxlab/sandbox"
)

// A model that meets cut output can print less, or read the rest from a
// file. The careful tool made by NewCarefulKeeping saves it the second
// run: it keeps each stream it cut in a file of the session and names the
// file in the reply.
//
// The sandbox hands back at most Limits.OutputChars characters of a
// stream and holds at most Limits.OutputHeld bytes of it, never more.
// KeepingPolicy raises the first to what the second allows, so that a run
// returns up to about 2 MiB of each stream; the tool cuts the reply itself,
// exactly as the sandbox would have at the reply's budget, and writes what
// the sandbox returned to the file. A stream longer than that is kept as
// the sandbox returned it: its start and its end, with the sandbox's
// marker between them. (Keeping everything up to the quota needs the
// sandbox to pass each byte on as it reads it.)

// keptDir is the directory of the session the kept streams go to.
const keptDir = "output"

// markerFormat is the sandbox's marker in the middle of a cut stream
// (sandbox/output.go); the careful tool's own cut writes the same.
const markerFormat = "\n[... %d bytes left out ...]\n"

// KeepingPolicy returns p with its output budget raised as far as its
// OutputHeld (and the file API's MaxFileSize) allows, for a session whose
// careful tool keeps cut streams (NewCarefulKeeping). A policy without an
// output cap is returned as it is: nothing is ever cut under it.
func KeepingPolicy(p sandbox.Policy) sandbox.Policy {
	if p.Limits.OutputChars == 0 {
		return p
	}
	held := int64(sandbox.MaxFileSize)
	if h := p.Limits.OutputHeld; h > 0 && h < held {
		held = h
	}
	// The sandbox holds four bytes a character (the worst case of UTF-8)
	// plus a few to re-align; the margin leaves room for the marker, so
	// that the text returned fits in one file of the file API.
	if chars := int((held - 64) / utf8.UTFMax); chars > p.Limits.OutputChars {
		p.Limits.OutputChars = chars
	}
	return p
}

// NewCarefulKeeping returns the careful tool over s, cutting each stream of
// its replies to replyChars characters, as the sandbox cuts them for
// NewCareful, and keeping a stream it cut in the file
// output/<stream>-<run>.txt of the session (as much as the session's
// quota has room for), named in the reply. s's policy must return more
// than replyChars characters a stream: make it with KeepingPolicy.
func NewCarefulKeeping(s *sandbox.Session, replyChars int) (*Careful, error) {
	p := s.Policy()
	if replyChars <= 0 || p.Limits.OutputChars <= replyChars {
		return nil, fmt.Errorf("keeping cut output: the session returns %d characters a stream, want more than the reply's %d (use KeepingPolicy)",
			p.Limits.OutputChars, replyChars)
	}
	p.Limits.OutputChars = replyChars // what the description promises
	return &Careful{session: s, description: CarefulDescription(p, s.Quota()), replyChars: replyChars}, nil
}

// keptStreams are the sentences a reply adds to each cut stream's note:
// where the whole stream is, or why it is not kept. Empty for a tool
// that keeps nothing.
type keptStreams struct{ stdout, stderr string }

// keep cuts res's streams to the reply's budget and keeps each one it cut
// in a file, then lists the session again so that the reply names the
// files.
func (c *Careful) keep(res *sandbox.Result) keptStreams {
	var kept keptStreams
	run := c.session.Runs()
	streams := []struct {
		name      string
		text      *string
		truncated *bool
		written   int64
		note      *string
	}{
		{"stdout", &res.Stdout, &res.StdoutTruncated, res.StdoutBytes, &kept.stdout},
		{"stderr", &res.Stderr, &res.StderrTruncated, res.StderrBytes, &kept.stderr},
	}
	wrote := false
	for _, st := range streams {
		if !*st.truncated && utf8.RuneCountInString(*st.text) <= c.replyChars {
			continue
		}
		held, cutBefore := *st.text, *st.truncated
		*st.text, *st.truncated = cutText(held, c.replyChars, st.written), true
		name := fmt.Sprintf("%s/%s-%d.txt", keptDir, st.name, run)
		*st.note = c.keepFile(name, held, cutBefore)
		wrote = true
	}
	if wrote {
		if files, err := c.session.List(); err == nil {
			res.Files, res.FilesTruncated = files, false
			if len(files) > sandbox.MaxListed {
				res.Files, res.FilesTruncated = files[:sandbox.MaxListed], true
			}
		}
	}
	return kept
}

// keepFile writes held to name in the session when the quota has room,
// and returns the sentence that tells the model where it is, or why not.
func (c *Careful) keepFile(name, held string, cutBefore bool) string {
	if room, ok := c.room(); ok && blocks(int64(len(held))) > room {
		return fmt.Sprintf(" The whole stream was not kept in a file: the session's quota has %d bytes free, and it needs %d. "+
			"Delete files you no longer need to make room.", max(room, 0), len(held))
	}
	if err := c.session.WriteFile(name, []byte(held)); err != nil {
		return fmt.Sprintf(" The whole stream was not kept in a file: %v.", err)
	}
	what := "The whole stream is kept"
	if cutBefore {
		what = "Its first and last parts (the middle cut out as in the reply) are kept"
	}
	return fmt.Sprintf(" %s in the file %s (%d bytes): read the part you need from it (read_file takes an offset and a length, "+
		"and code can open it) instead of running the code again.", what, strconv.Quote(name), len(held))
}

// room returns how many bytes the session's quota has free, by the sizes
// of its files in whole blocks (the quota counts blocks); false when it
// has no quota.
func (c *Careful) room() (int64, bool) {
	quota := c.session.Quota()
	if quota < 0 {
		return 0, false
	}
	files, err := c.session.List()
	if err != nil {
		return 0, true
	}
	var used int64
	for _, f := range files {
		used += blocks(f.Size)
	}
	return quota - used, true
}

// blocks rounds n up to the 4 KiB blocks a file of n bytes takes on disk
// (at least one, as a directory or an empty file's inode counts too).
func blocks(n int64) int64 { return max((n+4095)/4096, 1) * 4096 }

// cutText cuts text, the start of a stream of written bytes (or its start
// and end around the sandbox's marker), to maxChars characters as the
// sandbox cuts a stream: the first 60% and the last 40% of the room the
// marker leaves, and the marker with the bytes left out between them.
func cutText(text string, maxChars int, written int64) string {
	room := max(maxChars-len(fmt.Sprintf(markerFormat, int64(1)<<62)), 0)
	h := room * 6 / 10
	head := firstRunes(text, h)
	tail := lastRunes(text, room-h)
	left := written - int64(len(head)) - int64(len(tail))
	return head + fmt.Sprintf(markerFormat, left) + tail
}

// firstRunes returns the first n characters of s (an invalid byte counts
// as one).
func firstRunes(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

// lastRunes returns the last n characters of s.
func lastRunes(s string, n int) string {
	i := len(s)
	for k := 0; k < n && i > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}
