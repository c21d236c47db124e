package sandboxlab_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"sandboxlab/attacks"
	"sandboxlab/checks"
	"sandboxlab/doctor"
	"sandboxlab/mutants"
	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

// The README is the front door: it keeps a few figures, and each of them
// is held here to the code it describes. Everything measured (times,
// loads) lives in docs/performance.md, dated, and never in the README.
//
// A claim is one sentence of the README, written as a pattern whose
// groups are its figures, and the function that computes those figures
// from their source. TestReadmeFigures fails when a claim's sentence is
// gone (so rewording it cannot pass in silence), when a figure differs
// from its source, and when the README holds a figure no claim covers.

const readmeFile = "README.md"

// readmeClaim is one sentence of the README and the source of its figures.
type readmeClaim struct {
	what   string         // the figures, for messages
	re     *regexp.Regexp // the sentence; each group is one figure
	source string         // where the figures come from
	want   func() []string
}

// sentence compiles a claim's pattern: a space in it matches any run of
// white space, so that the README may wrap its lines anywhere.
func sentence(pattern string) *regexp.Regexp {
	return regexp.MustCompile(strings.ReplaceAll(pattern, " ", `\s+`))
}

// readmeClaims are the README's figures. A new figure in the README needs
// a claim here, or it fails TestReadmeFigures as unchecked.
var readmeClaims = []readmeClaim{
	{
		what:   "the course suite's levels, checks, defects and attacks",
		re:     sentence(`The course's (\w+) levels \(L(\d)–L(\d)\), (\d+) checks, (\d+) defects and (\d+) attacks`),
		source: "verdict.CourseLevels, checks.All, mutants.All and attacks.All() with Suite course",
		want: func() []string {
			return []string{numberWord(verdict.CourseLevels), "0", itoa(verdict.CourseLevels - 1),
				itoa(checksIn(verdict.Course)), itoa(defectsIn(verdict.Course)), itoa(attacksIn(verdict.Course))}
		},
	},
	{
		what:   "the hardening suite's level, checks, defects and attacks",
		re:     sentence("`hardening` suite: L(\\d), (\\d+) checks, (\\d+) defects and (\\d+) attacks"),
		source: "sandbox.Levels, checks.All, mutants.All and attacks.All() with Suite hardening",
		want: func() []string {
			return []string{itoa(sandbox.Levels - 1),
				itoa(checksIn(verdict.Hardening)), itoa(defectsIn(verdict.Hardening)), itoa(attacksIn(verdict.Hardening))}
		},
	},
	{
		what:   "the defects of make report",
		re:     sentence(`runs both suites, (\d+) defects in all`),
		source: "len(mutants.All)",
		want:   func() []string { return []string{itoa(len(mutants.All))} },
	},
	{
		what:   "the Go version",
		re:     sentence(`Go (\d+\.\d+), to build it`),
		source: "go.mod's go directive",
		want:   func() []string { return []string{goVersion()} },
	},
	{
		what:   "the default level",
		re:     sentence(`hardened by default \(L(\d)\)`),
		source: "doctor.DefaultLevel",
		want:   func() []string { return []string{itoa(doctor.DefaultLevel)} },
	},
	{
		what:   "the default level",
		re:     sentence("`run` runs at L(\\d) unless `--level N` says otherwise"),
		source: "doctor.DefaultLevel",
		want:   func() []string { return []string{itoa(doctor.DefaultLevel)} },
	},
	{
		what:   "doctor's exit codes",
		re:     sentence(`It exits (\d+) when the default level runs on this machine and (\d+) when it does not`),
		source: "verdict.ExitOK and verdict.ExitRunRefused",
		want:   func() []string { return []string{itoa(verdict.ExitOK), itoa(verdict.ExitRunRefused)} },
	},
	exitClaim(`the gate holds`, "verdict.ExitOK", verdict.ExitOK),
	exitClaim(`an unexpected escape`, "verdict.ExitEscape", verdict.ExitEscape),
	exitClaim(`a prediction divergence`, "verdict.ExitDivergence", verdict.ExitDivergence),
	exitClaim(`the baseline is broken`, "verdict.ExitBaseline", verdict.ExitBaseline),
	exitClaim(`a flaky probe`, "verdict.ExitFlaky", verdict.ExitFlaky),
	exitClaim(`a usage or internal error`, "verdict.ExitInternal", verdict.ExitInternal),
	{
		what:   "L0's watchdog",
		re:     sentence(`a (\d+) s watchdog`),
		source: "sandbox.Preset(0).Watchdog",
		want:   func() []string { return []string{seconds(preset(0).Watchdog)} },
	},
	{
		what:   "L1's wall clock",
		re:     sentence(`wall clock ([\d.]+) s`),
		source: "sandbox.Preset(1).Limits.Wall",
		want:   func() []string { return []string{seconds(preset(1).Limits.Wall)} },
	},
	{
		what:   "L1's CPU limits",
		re:     sentence(`CPU (\d+) s soft and (\d+) s hard`),
		source: "sandbox.Preset(1).Limits.CPU and CPUHard",
		want: func() []string {
			return []string{seconds(preset(1).Limits.CPU), seconds(preset(1).Limits.CPUHard)}
		},
	},
	{
		what:   "L1's address space",
		re:     sentence(`(\d+) MiB address space`),
		source: "sandbox.Preset(1).Limits.AddressSpace",
		want:   func() []string { return []string{mib(preset(1).Limits.AddressSpace)} },
	},
	{
		what:   "L1's file size",
		re:     sentence(`(\d+) MiB files`),
		source: "sandbox.Preset(1).Limits.FileSize",
		want:   func() []string { return []string{mib(preset(1).Limits.FileSize)} },
	},
	{
		what:   "L1's open files",
		re:     sentence(`(\d+) open files`),
		source: "sandbox.Preset(1).Limits.OpenFiles",
		want:   func() []string { return []string{itoa(preset(1).Limits.OpenFiles)} },
	},
	{
		what:   "L1's output cap",
		re:     sentence(`([\d,]+) characters of output`),
		source: "sandbox.Preset(1).Limits.OutputChars",
		want:   func() []string { return []string{thousands(preset(1).Limits.OutputChars)} },
	},
	{
		what:   "L3's process cap",
		re:     sentence(`more than (\d+) processes stop the run`),
		source: "sandbox.Preset(3).Processes.Max",
		want:   func() []string { return []string{itoa(preset(3).Processes.Max)} },
	},
	{
		what:   "L6's session quota",
		re:     sentence(`a session of at most (\d+) MiB and ([\d,]+) files`),
		source: "sandbox.DefaultQuota and sandbox.Preset(6).Hardened.SessionInodes",
		want: func() []string {
			return []string{mib(sandbox.DefaultQuota), thousands(preset(6).Hardened.SessionInodes)}
		},
	},
	{
		what:   "L6's control group",
		re:     sentence(`(\d+) MiB of real memory and (\d+) processes in a control group`),
		source: "sandbox.Preset(6).Hardened.Cgroup.Memory and Pids",
		want: func() []string {
			c := preset(6).Hardened.Cgroup
			return []string{mib(c.Memory), itoa(c.Pids)}
		},
	},
}

// exitClaim is the line of the README's list of the gate's exit codes
// that begins with the code and says what.
func exitClaim(what, source string, code int) readmeClaim {
	return readmeClaim{
		what:   "the exit code for " + what,
		re:     sentence(`(?m)^- (\d+): ` + what),
		source: source,
		want:   func() []string { return []string{itoa(code)} },
	}
}

// notFigures are the README's words with digits in them that are names,
// not figures.
var notFigures = []string{"cgroup v1", "cgroup v2", "32-bit"}

var (
	figure     = regexp.MustCompile(`\d[\d,.]*`)
	levelToken = regexp.MustCompile(`\bL(\d+)\b`)
	inlineCode = regexp.MustCompile("`[^`]*`")
	linkTarget = regexp.MustCompile(`\]\([^)]*\)`)
	levelRow   = regexp.MustCompile(`(?m)^\| L(\d+) ([^|]+?) \|`)
)

// TestReadmeFigures holds every figure of README.md to its source: each
// claim's sentence is there and says what its source says; the level
// table names every level by its name; every level named exists; and no
// other figure is left unchecked. The console transcripts (fenced code)
// are examples, and are not checked.
func TestReadmeFigures(t *testing.T) {
	text, err := os.ReadFile(readmeFile)
	if err != nil {
		t.Fatal(err)
	}
	// rest is the README with every checked span blanked out; what digits
	// are left in it are figures no claim covers.
	rest := bytes.Clone(text)
	for _, c := range readmeClaims {
		matches := c.re.FindAllSubmatchIndex(text, -1)
		if len(matches) == 0 {
			t.Errorf("%s: no sentence matches %q, which states %s: it was removed or reworded. Put it back, or change the claim in readme_test.go (its figures come from %s)",
				readmeFile, c.re, c.what, c.source)
			continue
		}
		want := c.want()
		for _, m := range matches {
			line := lineOf(text, m[0])
			var got []string
			for g := 1; g < len(m)/2; g++ {
				got = append(got, string(text[m[2*g]:m[2*g+1]]))
			}
			if len(got) != len(want) {
				t.Fatalf("readme_test.go: the claim on %s has %d groups and %d figures from its source", c.what, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%s:%d: %q says %s for %s, but %s gives %s: correct the README",
						readmeFile, line, text[m[0]:m[1]], got[i], c.what, c.source, want[i])
				}
			}
			blank(rest, m[0], m[1])
		}
	}
	checkLevelTable(t, text)
	blankFences(rest)
	for _, re := range []*regexp.Regexp{inlineCode, linkTarget} {
		for _, m := range re.FindAllIndex(rest, -1) {
			blank(rest, m[0], m[1])
		}
	}
	for _, w := range notFigures {
		for i := bytes.Index(rest, []byte(w)); i >= 0; i = bytes.Index(rest, []byte(w)) {
			blank(rest, i, i+len(w))
		}
	}
	for _, m := range levelToken.FindAllSubmatchIndex(rest, -1) {
		if n, _ := strconv.Atoi(string(rest[m[2]:m[3]])); n >= sandbox.Levels {
			t.Errorf("%s:%d: names level L%d, but the sandbox has L0 to L%d (sandbox.Levels)",
				readmeFile, lineOf(text, m[0]), n, sandbox.Levels-1)
		}
		blank(rest, m[0], m[1])
	}
	for _, m := range figure.FindAllIndex(rest, -1) {
		t.Errorf("%s:%d: %q is a figure that no test checks: add a claim to readmeClaims (readme_test.go) that computes it from its source, or move it to docs/ (a measured one to docs/performance.md, with its date, machine and command)",
			readmeFile, lineOf(text, m[0]), rest[m[0]:m[1]])
	}
}

// checkLevelTable: the README's table of levels has a row for each level
// the sandbox has, in order, each named as sandbox.LevelNames names it.
func checkLevelTable(t *testing.T, text []byte) {
	t.Helper()
	rows := levelRow.FindAllSubmatchIndex(text, -1)
	if len(rows) == 0 {
		t.Errorf("%s: no table of levels (rows that begin \"| L0 bare |\"): put it back; its names come from sandbox.LevelNames", readmeFile)
		return
	}
	for i, m := range rows {
		line := lineOf(text, m[0])
		n, _ := strconv.Atoi(string(text[m[2]:m[3]]))
		name := string(text[m[4]:m[5]])
		switch {
		case n != i:
			t.Errorf("%s:%d: the table of levels has L%d as its row %d: want the levels in order from L0", readmeFile, line, n, i+1)
		case n >= sandbox.Levels:
			t.Errorf("%s:%d: the table of levels has L%d, but the sandbox has L0 to L%d (sandbox.Levels)", readmeFile, line, n, sandbox.Levels-1)
		case name != sandbox.LevelNames[n]:
			t.Errorf("%s:%d: the table of levels names L%d %q, but sandbox.LevelNames says %q", readmeFile, line, n, name, sandbox.LevelNames[n])
		}
	}
	if len(rows) != sandbox.Levels {
		t.Errorf("%s: the table of levels has %d rows, but the sandbox has %d levels (sandbox.Levels)", readmeFile, len(rows), sandbox.Levels)
	}
}

// TestReadmeLinks: every relative link of README.md and docs/*.md names a
// file that exists and, with a #fragment, a heading of that page. The
// pages moved out of the README once; a link left behind fails here.
func TestReadmeLinks(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{readmeFile}, pages...)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(page string) (map[string]bool, error) {
		if a, ok := anchors[page]; ok {
			return a, nil
		}
		b, err := os.ReadFile(page)
		if err != nil {
			return nil, err
		}
		anchors[page] = headingAnchors(b)
		return anchors[page], nil
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		prose := bytes.Clone(text)
		blankFences(prose)
		for _, m := range link.FindAllSubmatchIndex(prose, -1) {
			target := string(prose[m[2]:m[3]])
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = filepath.Join(filepath.Dir(page), file)
			}
			where := fmt.Sprintf("%s:%d: the link to %q", page, lineOf(text, m[0]), target)
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s: %s does not exist", where, dest)
				continue
			}
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(dest, ".md") {
				t.Errorf("%s: a #fragment of a file that is not markdown", where)
				continue
			}
			a, err := anchorsOf(dest)
			if err != nil {
				t.Fatal(err)
			}
			if !a[frag] {
				t.Errorf("%s: %s has no heading whose anchor is #%s", where, dest, frag)
			}
		}
	}
}

// headingAnchors are the anchors GitHub gives a page's headings: lower
// case, letters, digits, spaces, hyphens and underscores kept, spaces
// made hyphens, a repeated anchor numbered from -1.
func headingAnchors(text []byte) map[string]bool {
	prose := bytes.Clone(text)
	blankFences(prose)
	out := map[string]bool{}
	for _, line := range strings.Split(string(prose), "\n") {
		title, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !ok || !strings.HasPrefix(line, "#") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(title)) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		for n := 1; out[a]; n++ {
			a = fmt.Sprintf("%s-%d", b.String(), n)
		}
		out[a] = true
	}
	return out
}

// blankFences blanks the fenced code blocks of a markdown text.
func blankFences(text []byte) {
	start, in := 0, false
	for i := 0; i < len(text); {
		end := bytes.IndexByte(text[i:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += i
		}
		if bytes.HasPrefix(bytes.TrimLeft(text[i:end], " "), []byte("```")) {
			if in {
				blank(text, start, end)
			} else {
				start = i
			}
			in = !in
		}
		i = end + 1
	}
	if in {
		blank(text, start, len(text))
	}
}

// blank overwrites text[from:to] with spaces, keeping its newlines, so
// that offsets and line numbers stay where they were.
func blank(text []byte, from, to int) {
	for i := from; i < to; i++ {
		if text[i] != '\n' {
			text[i] = ' '
		}
	}
}

func lineOf(text []byte, offset int) int { return 1 + bytes.Count(text[:offset], []byte("\n")) }

func checksIn(s verdict.Suite) int {
	return countIn(checks.All, func(c *checks.Check) verdict.Suite { return c.Suite }, s)
}

func defectsIn(s verdict.Suite) int {
	return countIn(mutants.All, func(d mutants.Defect) verdict.Suite { return d.Suite }, s)
}

func attacksIn(s verdict.Suite) int {
	return countIn(attacks.All(), func(a attacks.Info) verdict.Suite { return a.Suite }, s)
}

// countIn counts the members of list in suite s.
func countIn[T any](list []T, suite func(T) verdict.Suite, s verdict.Suite) int {
	n := 0
	for _, x := range list {
		if suite(x) == s {
			n++
		}
	}
	return n
}

func preset(n int) sandbox.Policy { return sandbox.MustPreset(n) }

func itoa(n int) string { return strconv.Itoa(n) }

// seconds writes a duration as the README does: 1.5 for 1500 ms.
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

func mib(n int64) string { return strconv.FormatInt(n>>20, 10) }

// thousands writes n with a comma between each three digits: 10,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// numberWord spells a small count, as the README's prose does.
func numberWord(n int) string {
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	if n < len(words) {
		return words[n]
	}
	return itoa(n)
}

// goVersion is the language version go.mod asks for, major.minor.
func goVersion() string {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		return "go.mod: " + err.Error()
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(b)
	if m == nil {
		return "go.mod has no go directive"
	}
	return string(m[1])
}
