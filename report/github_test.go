package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"sandboxlab/verdict"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"
)

func TestAnnotationsGolden(t *testing.T) {
	var b bytes.Buffer
	lines := map[string]int{"no_pid_ns": 237, "quota_ignored": 170}
	assert.NilError(t, WriteGitHubAnnotations(&b, fixtureMutation(), func(d Defect) int { return lines[d.ID] }))
	golden.Assert(t, b.String(), "annotations.golden")
	// Only unexpected escapes: no_pid_ns, quota_ignored, fresh_dir_per_run
	// (hung); caps_kept diverges without letting anything through.
	assert.Check(t, is.Equal(strings.Count(b.String(), "::error "), 3))
	assert.Check(t, !strings.Contains(b.String(), "caps_kept"))
	assert.Check(t, is.Contains(b.String(), "::error file=sandbox/session.go,line=1,"), "an unknown line falls back to 1")
}

// TestAnnotationsLimit: twelve unexpected escapes give ten errors and a
// notice naming the other two.
func TestAnnotationsLimit(t *testing.T) {
	m := &Mutation{}
	for i := range 12 {
		m.Defects = append(m.Defects, Defect{ID: fmt.Sprintf("d%02d", i), Site: "sandbox/run.go", Outcome: verdict.Escaped,
			Unexpected: []string{"escaped: predicted x, failed none"}, UnexpectedEscape: true})
	}
	var b bytes.Buffer
	assert.NilError(t, WriteGitHubAnnotations(&b, m, nil))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	assert.Assert(t, is.Len(lines, MaxAnnotations+1))
	for _, l := range lines[:MaxAnnotations] {
		assert.Check(t, strings.HasPrefix(l, "::error file=sandbox/run.go,line=1,title=unexpected escape%3A d"), l)
	}
	assert.Check(t, is.Equal(lines[MaxAnnotations], "::notice title=more unexpected escapes::2 more defects with an unexpected escape, not annotated (GitHub shows 10 error annotations per step): d10, d11; see the report"))
}

func TestWorkflowCommandEscaping(t *testing.T) {
	assert.Check(t, is.Equal(escapeData("50% done\r\nnext: a,b"), "50%25 done%0D%0Anext: a,b"))
	assert.Check(t, is.Equal(escapeProperty("a: b, 100%\n"), "a%3A b%2C 100%25%0A"))
	m := &Mutation{Defects: []Defect{{ID: "x", Site: "dir,with:odd/file.go", Summary: "line one\nline two", UnexpectedEscape: true, Unexpected: []string{"100% through"}}}}
	var b bytes.Buffer
	assert.NilError(t, WriteGitHubAnnotations(&b, m, func(Defect) int { return 7 }))
	out := b.String()
	assert.Check(t, is.Equal(strings.Count(out, "\n"), 1), "one command, one line")
	assert.Check(t, strings.HasPrefix(out, "::error file=dir%2Cwith%3Aodd/file.go,line=7,title=unexpected escape%3A x::x: line one%0Aline two%0Aunexpected: 100%25 through%0A"), out)
}
