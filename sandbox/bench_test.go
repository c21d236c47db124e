package sandbox

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"testing"
	"time"
)

// BenchmarkStart measures starting /bin/true at each level, next to a
// plain fork+exec and, when it is installed, bubblewrap with every
// namespace. Besides the mean (ns/op) it reports the median, which a busy
// machine's outliers move less. Run with 'make bench'.
func BenchmarkStart(b *testing.B) {
	b.Run("exec", func(b *testing.B) {
		medianOf(b, func() error { return exec.Command("/bin/true").Run() })
	})
	for n := range Levels {
		b.Run(fmt.Sprintf("L%d", n), func(b *testing.B) {
			s, err := NewSession(Options{Policy: MustPreset(n), Root: testRoot(b)})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			medianOf(b, func() error {
				res, err := s.Run(context.Background(), Command{Path: "/bin/true"})
				if err == nil && res.ExitCode != 0 {
					err = fmt.Errorf("exit status %d", res.ExitCode)
				}
				return err
			})
		})
	}
	if bwrap, err := exec.LookPath("bwrap"); err == nil {
		b.Run("bwrap", func(b *testing.B) {
			medianOf(b, func() error {
				return exec.Command(bwrap, "--unshare-all", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "/bin/true").Run()
			})
		})
	}
}

// medianOf runs f b.N times and reports the median time of one run.
func medianOf(b *testing.B, f func() error) {
	times := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
}
