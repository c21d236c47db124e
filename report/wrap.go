package report

import (
	"io"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// DefaultWidth is the width text tables are fitted to when the
// terminal's is unknown: a file, a pipe, a CI log.
const DefaultWidth = 80

// minWrapWidth is the narrowest a wrapped column is made before its
// words are cut: narrower, a column reads one syllable a line.
const minWrapWidth = 6

// widthWriter is a writer that knows the width of the terminal behind
// it. Text renderers fit their tables to it (see widthOf); it passes
// the width through the Report interface without changing Tables.
type widthWriter struct {
	io.Writer
	width int
}

// widthOf returns the width to fit text tables written to w: the one w
// carries, else DefaultWidth.
func widthOf(w io.Writer) int {
	if ww, ok := w.(*widthWriter); ok && ww.width > 0 {
		return ww.width
	}
	return DefaultWidth
}

// block is one box of a table fitted to a width: a header and rows
// whose cells hold line breaks where they wrap.
type block struct {
	header []string
	rows   [][]string
}

// Box-drawing costs of a text table: each column takes its content and
// a space and a rule on each side shared with its neighbour, "│ x │".
func tableWidth(widths []int) int {
	w := 1
	for _, c := range widths {
		w += c + 3
	}
	return w
}

// fitTable fits a text table to width columns. A table that fits is
// returned as it is. Otherwise its long columns wrap at spaces, the
// widest first, down to their longest word; a table that still does not
// fit is split into column blocks, printed one under the other, each
// repeating the first column (which names the row), as a wide data frame
// is printed in a terminal. A word wider than all that allows is cut.
func fitTable(header []string, rows [][]string, width int) []block {
	n := len(header)
	natural, words := make([]int, n), make([]int, n)
	measure := func(cells []string) {
		for i := 0; i < n && i < len(cells); i++ {
			for _, line := range strings.Split(cells[i], "\n") {
				natural[i] = max(natural[i], twwidth.Width(line))
				for _, w := range strings.Fields(line) {
					words[i] = max(words[i], twwidth.Width(w))
				}
			}
		}
	}
	measure(header)
	for _, r := range rows {
		measure(r)
	}
	if n == 0 || tableWidth(natural) <= width {
		return []block{{header, rows}}
	}
	groups := columnGroups(natural, words, width)
	blocks := make([]block, 0, len(groups))
	for _, cols := range groups {
		nat, wd := pick(natural, cols), pick(words, cols)
		widths := waterFill(nat, wd, width)
		b := block{header: wrapCells(pick(header, cols), widths)}
		for _, r := range rows {
			b.rows = append(b.rows, wrapCells(pick(r, cols), widths))
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// columnGroups splits the columns after the first into as few
// contiguous groups as fit width at their longest words, each group led
// by the first column; the groups are as even in count as that allows.
func columnGroups(natural, words []int, width int) [][]int {
	n := len(natural)
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	floor := minWidths(natural, words)
	floor[0] = natural[0] // the first column names the row: keep it whole
	fits := func(cols []int) bool { return tableWidth(pick(floor, cols)) <= width }
	if n == 1 || fits(all) {
		return [][]int{all}
	}
	rest := all[1:]
	for k := 2; k <= len(rest); k++ {
		var groups [][]int
		ok := true
		for g := 0; g < k; g++ {
			lo, hi := g*len(rest)/k, (g+1)*len(rest)/k
			cols := append([]int{0}, rest[lo:hi]...)
			if !fits(cols) {
				ok = false
				break
			}
			groups = append(groups, cols)
		}
		if ok {
			return groups
		}
	}
	groups := make([][]int, len(rest)) // one column a block: its words are cut
	for i, c := range rest {
		groups[i] = []int{0, c}
	}
	return groups
}

// minWidths is how narrow each column may wrap: to its longest word, or
// its full width when that is less than minWrapWidth.
func minWidths(natural, words []int) []int {
	out := make([]int, len(natural))
	for i := range natural {
		out[i] = min(natural[i], max(words[i], minWrapWidth))
	}
	return out
}

// waterFill gives each column its natural width or a common cap,
// whichever is less, with the cap as high as width allows. The first
// column, which names the row (and which a reader of the text, such as
// reporttest.CrossCheck, finds rows by), stays whole while the others
// can make room. No column goes below its minimum (minWidths) unless
// even the minimums overflow, when the widest columns give up the
// difference and cut their words.
func waterFill(natural, words []int, width int) []int {
	floor := minWidths(natural, words)
	whole := slices.Clone(floor)
	whole[0] = natural[0]
	if tableWidth(whole) <= width {
		floor = whole
	}
	at := func(limit int) []int {
		out := make([]int, len(natural))
		for i := range natural {
			out[i] = max(floor[i], min(natural[i], limit))
		}
		return out
	}
	hi := 0
	for _, w := range natural {
		hi = max(hi, w)
	}
	for limit := hi; limit > 0; limit-- {
		if w := at(limit); tableWidth(w) <= width {
			return w
		}
	}
	out := at(0)
	for over := tableWidth(out) - width; over > 0; over-- {
		widest := 0
		for i := range out {
			if out[i] > out[widest] {
				widest = i
			}
		}
		if out[widest] <= 1 {
			break
		}
		out[widest]--
	}
	return out
}

// wrapCells wraps each cell to its column's width.
func wrapCells(cells []string, widths []int) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = wrapText(c, widths[i])
	}
	return out
}

// wrapText breaks s into lines of at most width display columns, at
// spaces; a word wider than width is cut. Existing line breaks stay.
func wrapText(s string, width int) string {
	if width <= 0 {
		return s
	}
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		line, lw := "", 0
		for _, word := range strings.Fields(para) {
			for ww := twwidth.Width(word); ww > width; ww = twwidth.Width(word) {
				if lw > 0 {
					lines, line, lw = append(lines, line), "", 0
				}
				head, tail := cutWidth(word, width)
				lines, word = append(lines, head), tail
			}
			ww := twwidth.Width(word)
			switch {
			case lw == 0:
				line, lw = word, ww
			case lw+1+ww <= width:
				line, lw = line+" "+word, lw+1+ww
			default:
				lines, line, lw = append(lines, line), word, ww
			}
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// cutWidth splits s after as many runes as fit width display columns
// (at least one).
func cutWidth(s string, width int) (string, string) {
	w := 0
	for i, r := range s {
		rw := twwidth.Width(string(r))
		if w+rw > width && i > 0 {
			return s[:i], s[i:]
		}
		w += rw
	}
	return s, ""
}

// pick returns the items of s at the indexes cols ("" past its end).
func pick[T any](s []T, cols []int) []T {
	out := make([]T, len(cols))
	for i, c := range cols {
		if c < len(s) {
			out[i] = s[c]
		}
	}
	return out
}

// wrapLines wraps each line of s that is wider than width at spaces; the
// lines it continues are indented as a list item's text is ("- " gives
// two spaces). Leading spaces stay; a line with nowhere to break stays
// whole.
func wrapLines(s string, width int) string {
	if width <= 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		if twwidth.Width(line) <= width {
			continue
		}
		body := strings.TrimLeft(line, " ")
		lead := line[:len(line)-len(body)]
		indent := lead
		if strings.HasPrefix(body, "- ") {
			indent += "  "
		}
		var out []string
		cur := lead
		for _, word := range strings.Fields(body) {
			switch {
			case strings.TrimSpace(cur) == "":
				cur += word
			case twwidth.Width(cur)+1+twwidth.Width(word) <= width:
				cur += " " + word
			default:
				out, cur = append(out, cur), indent+word
			}
		}
		lines[i] = strings.Join(append(out, cur), "\n")
	}
	return strings.Join(lines, "\n")
}
