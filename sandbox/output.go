package sandbox

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"sandboxlab/mutants"
)

// stream collects one output stream of a run. It counts every byte but
// holds only what it may return: the head and a ring of the tail, each
// sized for the worst case of four bytes per character. Policy.Validate
// makes sure that fits in Limits.OutputHeld.
type stream struct {
	maxChars int // characters returned; 0 returns (and holds) everything

	head    []byte // the first headCap bytes
	headCap int
	tail    []byte // ring of the last tailCap bytes after the head
	tailCap int
	tailPos int // next write position in tail once it is full
	total   int64
	all     bytes.Buffer // used only when nothing is cut, or with unbounded
	// unbounded is the unbounded_output defect, switched on once the
	// stream outgrows what it holds: the only point from which holding
	// everything makes a difference, so the only one its site is asked.
	unbounded, outgrown bool
}

// markerFormat is the line that replaces the middle of a cut stream.
const markerFormat = "\n[... %d bytes left out ...]\n"

func newStream(maxChars int) *stream {
	s := &stream{maxChars: maxChars}
	if maxChars > 0 {
		h, t := splitBudget(maxChars)
		s.headCap = 4 * h
		s.tailCap = 4*t + utf8.UTFMax - 1 // room to re-align on a rune start
	}
	return s
}

// splitBudget divides maxChars between head (60%) and tail (40%), leaving
// room for the marker so that the returned text never exceeds maxChars.
func splitBudget(maxChars int) (head, tail int) {
	room := maxChars - len(fmt.Sprintf(markerFormat, int64(1)<<62))
	if room < 0 {
		room = 0
	}
	head = room * 6 / 10
	return head, room - head
}

// heldBytes is the most a stream with this budget ever holds.
func heldBytes(maxChars int) int64 {
	s := newStream(maxChars)
	return int64(s.headCap + s.tailCap)
}

func (s *stream) Write(p []byte) (int, error) {
	n := len(p)
	s.total += int64(n)
	if s.maxChars == 0 || s.unbounded {
		s.all.Write(p)
		return n, nil
	}
	if !s.outgrown && s.total > int64(s.headCap+s.tailCap) {
		s.outgrown = true
		if mutants.On(mutants.UnboundedOutput) {
			// Until now head and tail held every byte, in order.
			s.unbounded = true
			s.all.Write(s.head)
			s.all.Write(s.tail)
			s.all.Write(p)
			s.head, s.tail = nil, nil
			return n, nil
		}
	}
	if room := s.headCap - len(s.head); room > 0 {
		k := min(room, len(p))
		s.head = append(s.head, p[:k]...)
		p = p[k:]
	}
	if len(p) >= s.tailCap {
		// Only the last tailCap bytes of p can survive.
		s.tail = append(s.tail[:0], p[len(p)-s.tailCap:]...)
		s.tailPos = 0
		return n, nil
	}
	for len(p) > 0 {
		if len(s.tail) < s.tailCap {
			k := min(s.tailCap-len(s.tail), len(p))
			s.tail = append(s.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(s.tail[s.tailPos:], p)
		s.tailPos = (s.tailPos + k) % s.tailCap
		p = p[k:]
	}
	return n, nil
}

// result returns the text to hand back and whether it was cut.
func (s *stream) result() (text string, truncated bool) {
	if s.maxChars == 0 {
		return s.all.String(), false
	}
	var head, tail []byte
	gap := true
	if s.unbounded {
		head, gap = s.all.Bytes(), false
	} else {
		ring := append(append([]byte(nil), s.tail[s.tailPos:]...), s.tail[:s.tailPos]...)
		if s.total <= int64(s.headCap+s.tailCap) {
			head, gap = append(s.head, ring...), false
		} else {
			head, tail = s.head, ring
		}
	}
	if !gap {
		if utf8.RuneCount(head) <= s.maxChars {
			return string(head), false
		}
		tail = head
	}
	h, t := splitBudget(s.maxChars)
	if mutants.On(mutants.HeadOnlyOutput) {
		h, t = h+t, 0
	}
	headText := firstRunes(head, h)
	tailText := lastRunes(tail, t)
	left := s.total - int64(len(headText)) - int64(len(tailText))
	return string(headText) + fmt.Sprintf(markerFormat, left) + string(tailText), true
}

func firstRunes(b []byte, n int) []byte {
	i := 0
	for k := 0; k < n && i < len(b); k++ {
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	return b[:i]
}

func lastRunes(b []byte, n int) []byte {
	i := len(b)
	for k := 0; k < n && i > 0; k++ {
		_, size := utf8.DecodeLastRune(b[:i])
		i -= size
	}
	return b[i:]
}
