package report

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// MaxAnnotations is how many error annotations GitHub Actions shows for
// one step; it drops the rest, so the harness writes no more than this and
// says how many it left out.
const MaxAnnotations = 10

// WriteGitHubAnnotations writes a GitHub Actions workflow command
//
//	::error file=<site>,line=<n>,title=<title>::<message>
//
// for each defect with an unexpected escape, at its planted site, in
// report order: the annotation lands on the line a reviewer has to look
// at. Other divergences get none: they are in the report and JUnit, and
// an annotation is for what lets something through. At most
// MaxAnnotations are written, then one ::notice:: naming the rest. line
// gives the line of a defect's site (1 when unknown).
func WriteGitHubAnnotations(w io.Writer, m *Mutation, line func(Defect) int) error {
	var escapes []Defect
	for _, d := range m.Defects {
		if d.UnexpectedEscape {
			escapes = append(escapes, d)
		}
	}
	for i, d := range escapes {
		if i == MaxAnnotations {
			var rest []string
			for _, r := range escapes[i:] {
				rest = append(rest, r.ID)
			}
			_, err := fmt.Fprintf(w, "::notice title=%s::%s\n", escapeProperty("more unexpected escapes"),
				escapeData(fmt.Sprintf("%d more defects with an unexpected escape, not annotated (GitHub shows %d error annotations per step): %s; see the report",
					len(rest), MaxAnnotations, strings.Join(rest, ", "))))
			return err
		}
		n := 1
		if line != nil {
			n = max(line(d), 1)
		}
		_, err := fmt.Fprintf(w, "::error file=%s,line=%d,title=%s::%s\n",
			escapeProperty(d.Site), n, escapeProperty("unexpected escape: "+d.ID), escapeData(annotationMessage(d)))
		if err != nil {
			return err
		}
	}
	return nil
}

// annotationMessage says what got through and what was predicted, on a
// few lines.
func annotationMessage(d Defect) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", d.ID, d.Summary)
	for _, u := range d.Unexpected {
		fmt.Fprintf(&b, "unexpected: %s\n", u)
	}
	for _, s := range d.Seen {
		fmt.Fprintf(&b, "seen: %s %s: %s\n", s.Probe, seenVerb(s.Verdict), s.Evidence)
	}
	fmt.Fprintf(&b, "predicted to fail: %s; failed: %s\n", list(d.PredictedChecks), list(d.FailedChecks))
	fmt.Fprintf(&b, "predicted attack escapes: %s; attack escapes: %s", cells(d.PredictedAttacks), cells(d.EscapedAttacks))
	return b.String()
}

// escapeData escapes a workflow command's message: '%', CR and LF, as
// the Actions toolkit's escapeData does.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value: also ':'
// and ',', which would end the value.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// gateCall matches a planted site, mutants.On(mutants.<Const>).
var gateCall = regexp.MustCompile(`mutants\.On\(mutants\.(\w+)\)`)

// SiteLine returns the line of the first planted site of defect id in the
// file site under root: the first mutants.On(mutants.<Const>) whose
// constant spells the id (case and underscores aside: NoPIDNS is
// no_pid_ns). The registry names the file, not the line, and lines move
// with every edit, so the line is looked up when it is needed.
func SiteLine(root, site, id string) (int, error) {
	f, err := os.Open(filepath.Join(root, site))
	if err != nil {
		return 0, fmt.Errorf("reading the site of %s: %w", id, err)
	}
	defer f.Close()
	want := strings.ReplaceAll(strings.ToLower(id), "_", "")
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		for _, m := range gateCall.FindAllStringSubmatch(sc.Text(), -1) {
			if strings.ToLower(m[1]) == want {
				return n, nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("reading the site of %s: %w", id, err)
	}
	return 0, fmt.Errorf("no mutants.On call for %s in %s", id, site)
}

// SiteLocator returns a line function for WriteGitHubAnnotations that
// looks each site up under the first of roots where it is found, and
// falls back to line 1 (the file is still right) when none has it.
func SiteLocator(roots ...string) func(Defect) int {
	return func(d Defect) int {
		for _, r := range roots {
			if n, err := SiteLine(r, d.Site, d.ID); err == nil {
				return n
			}
		}
		return 1
	}
}
