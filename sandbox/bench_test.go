package sandbox

import (
	"context"
	"fmt"
	"os/exec"
	"testing"
)

// BenchmarkStart measures starting /bin/true at each level, next to a
// plain fork+exec and, when it is installed, bubblewrap with every
// namespace. Run with 'make bench'.
func BenchmarkStart(b *testing.B) {
	b.Run("exec", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for n := range Levels {
		b.Run(fmt.Sprintf("L%d", n), func(b *testing.B) {
			s, err := NewSession(Options{Policy: MustPreset(n), Root: testRoot(b)})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			for b.Loop() {
				res, err := s.Run(context.Background(), Command{Path: "/bin/true"})
				if err != nil || res.ExitCode != 0 {
					b.Fatal(err, res)
				}
			}
		})
	}
	if bwrap, err := exec.LookPath("bwrap"); err == nil {
		b.Run("bwrap", func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(bwrap, "--unshare-all", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "/bin/true")
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatal(err, string(out))
				}
			}
		})
	}
}
