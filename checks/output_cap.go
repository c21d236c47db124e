package checks

import (
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"unicode/utf8"

	"sandboxlab/sandbox"
)

var outputCap = &Check{
	ID:      "output_cap",
	Promise: "huge output is cut to head 60% + tail 40% with a marker; no more than 8 MB is ever held",
	Level:   1,
	Body: func(t *T) {
		// Printing 50 MB can outlast the 1.5 s wall clock when the
		// mutation run keeps both cores busy; the clock is not under test.
		p := Preset(1, TimeLimits(cpuBound))
		s := t.session(p, 0)
		const total = 50 << 20
		// What the harness allocates while capturing is what it held
		// (checks run one at a time, so little else allocates).
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		res := t.python(s, sandbox.Command{}, `
import sys
sys.stdout.write("BEGIN\n")
line = "y" * 1023 + "\n"
block = line * 1024
for i in range(49):
    sys.stdout.write(block)
sys.stdout.write(line * 1023 + "x" * (1024 - 14) + "\nTHE ERROR END")
`)
		runtime.ReadMemStats(&after)
		allocated := int64(after.TotalAlloc - before.TotalAlloc)
		out := res.Stdout
		chars := utf8.RuneCountInString(out)
		t.Check(res.StdoutBytes == total+6, "the result counts %d bytes written, want %d", res.StdoutBytes, total+6)
		t.Check(res.StdoutTruncated, "50 MiB came back uncut")
		t.Check(chars <= p.Limits.OutputChars, "%d characters came back; the cap is %d", chars, p.Limits.OutputChars)
		t.Check(strings.HasPrefix(out, "BEGIN\n"), "the head is missing")
		t.Check(strings.HasSuffix(out, "THE ERROR END"), "the tail is missing: the end names the error")
		m := regexp.MustCompile(`\[\.\.\. (\d+) bytes left out \.\.\.\]`).FindStringSubmatchIndex(out)
		if t.Check(m != nil, "no marker saying how much was left out") {
			left, _ := strconv.ParseInt(out[m[2]:m[3]], 10, 64)
			head, tail := out[:m[0]-1], out[m[1]+1:]
			t.Check(left+int64(len(head)+len(tail)) == res.StdoutBytes, "the marker says %d bytes left out, but %d were", left, res.StdoutBytes-int64(len(head)+len(tail)))
			share := float64(len(head)) / float64(len(head)+len(tail))
			t.Check(share > 0.55 && share < 0.65, "head is %.0f%% of what came back, want 60%%", share*100)
		}
		t.Check(allocated < p.Limits.OutputHeld, "the harness allocated %d MiB while capturing; it may hold %d MiB", allocated>>20, p.Limits.OutputHeld>>20)
		t.Evidence("%d of %d bytes came back (%d characters) with head, marker and tail; harness allocated %.1f MiB", len(out), res.StdoutBytes, chars, float64(allocated)/(1<<20))
	},
}
