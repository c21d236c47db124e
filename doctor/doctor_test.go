package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"sandboxlab/report"
	"sandboxlab/sandbox"
	"sandboxlab/sandbox/reexec"
)

func TestMain(m *testing.M) {
	reexec.Init()
	os.Exit(m.Run())
}

// TestExamine: every level has a line with its layers, L0 (nothing but a
// child process) runs anywhere, a level that does not run names a layer
// it has and why, the default level's line decides DefaultOK, and every
// tool says what it is for.
func TestExamine(t *testing.T) {
	d, err := Examine(context.Background())
	assert.NilError(t, err)
	assert.Assert(t, is.Len(d.Levels, sandbox.Levels))
	assert.Check(t, d.Levels[0].OK, "L0: %s", d.Levels[0].Why)
	for _, l := range d.Levels {
		assert.Check(t, is.DeepEqual(l.Layers, nonNil(sandbox.LayersOn(sandbox.MustPreset(l.Level)))), "L%d", l.Level)
		if !l.OK {
			assert.Check(t, l.Why != "" && l.Fix != "", "L%d says nothing of why", l.Level)
			assert.Check(t, is.Contains(l.Layers, l.Missing), "L%d misses a layer it does not have", l.Level)
		}
	}
	assert.Check(t, is.Equal(d.DefaultOK, d.Levels[DefaultLevel].OK))
	for _, tl := range d.Tools {
		assert.Check(t, tl.For != "", tl.Name)
		assert.Check(t, !tl.Found || tl.Version != "", "%s found without a version", tl.Name)
	}
	for _, f := range d.Features {
		assert.Check(t, f.OK || f.Fix != "", "%s is missing without a fix", f.Name)
	}
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// TestJSONShape pins the JSON's shape (every key and the kind of its
// value, arrays by their first element), whatever this machine has:
// scripts read it.
func TestJSONShape(t *testing.T) {
	d, err := Examine(context.Background())
	assert.NilError(t, err)
	// Fill the optional parts so that each appears once in the shape.
	d.Features = append(d.Features, report.DoctorItem{Name: "x", Detail: "y", Fix: "z"})
	d.Levels = append(d.Levels, report.DoctorLevel{Layers: []string{"l"}, Missing: "l", Why: "w", Fix: "f"})
	d.Tools = append([]report.DoctorTool{{Name: "t", Found: true, Path: "/p", Version: "v", For: "f", Note: "n"}}, d.Tools...)
	d.Levels[0] = d.Levels[len(d.Levels)-1]
	d.Features[0] = d.Features[len(d.Features)-1]
	b, err := json.Marshal(d)
	assert.NilError(t, err)
	var v any
	assert.NilError(t, json.Unmarshal(b, &v))
	var lines []string
	shape("", v, &lines)
	golden.Assert(t, strings.Join(lines, "\n")+"\n", "doctor-shape.golden")
}

// shape lists each path of v with the JSON kind of its value.
func shape(path string, v any, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			shape(path+"."+k, x[k], out)
		}
	case []any:
		*out = append(*out, path+": array")
		if len(x) > 0 {
			shape(path+"[]", x[0], out)
		}
	case float64:
		*out = append(*out, path+": number")
	case bool:
		*out = append(*out, path+": boolean")
	case string:
		*out = append(*out, path+": string")
	default:
		*out = append(*out, fmt.Sprintf("%s: %v", path, v))
	}
}
