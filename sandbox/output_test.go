package sandbox

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func collect(maxChars int, chunks ...string) *stream {
	s := newStream(maxChars)
	for _, c := range chunks {
		s.Write([]byte(c))
	}
	return s
}

func TestStreamShortOutputIsWhole(t *testing.T) {
	s := collect(8000, "hello ", "world\n")
	text, cut := s.result()
	assert.Check(t, is.Equal(text, "hello world\n"))
	assert.Check(t, !cut)
	assert.Check(t, is.Equal(s.total, int64(12)))
}

func TestStreamCutKeepsHeadAndTailWithMarker(t *testing.T) {
	const max = 8000
	var chunks []string
	for i := range 100000 {
		chunks = append(chunks, fmt.Sprintf("line %06d\n", i))
	}
	s := collect(max, chunks...)
	text, cut := s.result()
	assert.Assert(t, cut)
	assert.Check(t, utf8.RuneCountInString(text) <= max, "returned %d characters", utf8.RuneCountInString(text))
	assert.Check(t, strings.HasPrefix(text, "line 000000\n"))
	assert.Check(t, strings.HasSuffix(text, "line 099999\n"), "the end names the error: it must survive")

	head, tail := splitBudget(max)
	marker := fmt.Sprintf(markerFormat, s.total-int64(head)-int64(tail))
	assert.Check(t, is.Contains(text, marker))
	i := strings.Index(text, marker)
	assert.Check(t, is.Equal(i, head), "head is 60%% of the room left by the marker")
	assert.Check(t, is.Equal(len(text)-i-len(marker), tail))
	assert.Check(t, is.Equal(head, (head+tail)*6/10))
}

func TestStreamHoldsOnlyItsWindows(t *testing.T) {
	s := newStream(8000)
	chunk := []byte(strings.Repeat("x", 1<<20))
	for range 50 {
		s.Write(chunk)
	}
	assert.Check(t, is.Equal(s.total, int64(50<<20)))
	assert.Check(t, int64(cap(s.head)+cap(s.tail)) <= 2*heldBytes(8000), "held %d bytes", cap(s.head)+cap(s.tail))
	assert.Check(t, is.Equal(s.all.Cap(), 0))
}

func TestStreamCountsCharactersNotBytes(t *testing.T) {
	// 3-byte characters: a byte budget would return a third of them.
	in := strings.Repeat("€", 20000)
	text, cut := collect(8000, in).result()
	assert.Assert(t, cut)
	assert.Check(t, utf8.ValidString(text), "never cut inside a character")
	assert.Check(t, utf8.RuneCountInString(text) <= 8000)
	h, tl := splitBudget(8000)
	assert.Check(t, is.Equal(strings.Count(text, "€"), h+tl))
}

func TestStreamJustOverTheCapHasNoGap(t *testing.T) {
	// Longer than the character budget but short enough to be held whole:
	// head and tail come from one buffer and the marker counts what is cut.
	in := strings.Repeat("a", 5000) + strings.Repeat("b", 5000)
	s := collect(8000, in)
	text, cut := s.result()
	assert.Assert(t, cut)
	h, tl := splitBudget(8000)
	assert.Check(t, is.Equal(text, in[:h]+fmt.Sprintf(markerFormat, 10000-h-tl)+in[10000-tl:]))
}

func TestStreamUnlimitedKeepsAll(t *testing.T) {
	in := strings.Repeat("z", 100000)
	text, cut := collect(0, in[:50000], in[50000:]).result()
	assert.Check(t, !cut)
	assert.Check(t, is.Equal(text, in))
}
