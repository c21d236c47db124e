package report

import (
	"fmt"
	"io"
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
