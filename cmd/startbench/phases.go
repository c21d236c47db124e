package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"sandboxlab/sandbox"
)

// whereTimeGoes prints, from n samples each, the medians of the Go
// initialisation of the CLI ('sandboxlab --help') and of the init (in an
// L1 run), and of the init's set-up at L1 and L5.
func whereTimeGoes(w io.Writer, bin string, n int) error {
	var cli, init []time.Duration
	for range n {
		ends, err := initEnds(bin, "--help")
		if err != nil {
			return err
		}
		cli = append(cli, ends[0])
		ends, err = initEnds(bin, "run", "--level", "1", "--", "/bin/true")
		if err != nil {
			return err
		}
		if len(ends) < 2 {
			return fmt.Errorf("GODEBUG=inittrace=1 %s run --level 1: no trace of the init", bin)
		}
		init = append(init, ends[1])
	}
	fmt.Fprintf(w, "where the time goes (medians of %d):\n", n)
	fmt.Fprintf(w, "  Go initialisers of the CLI (sandboxlab --help) end %s ms after its start\n", ms(quantile(cli, 0.5)))
	fmt.Fprintf(w, "  Go initialisers of the init (an L1 run) end      %s ms after its start\n", ms(quantile(init, 0.5)))
	for _, level := range []int{1, 5} {
		d, err := initSetup(level, n)
		if err != nil {
			fmt.Fprintf(w, "  init's exec to the program's exec at L%d: not measured: %v\n", level, err)
			continue
		}
		fmt.Fprintf(w, "  init's exec to the program's exec at L%d:        %s ms (the init: %s)\n", level, ms(d), initBinary())
	}
	return nil
}

// initEnds runs bin args with GODEBUG=inittrace=1 and returns, for each
// Go process that traced (the CLI, then the init), when its last
// initialiser ended, after the process's start.
func initEnds(bin string, args ...string) ([]time.Duration, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("GODEBUG=inittrace=1 %s %s: %w", bin, strings.Join(args, " "), err)
	}
	var ends []time.Duration
	for _, line := range strings.Split(stderr.String(), "\n") {
		// init PKG @T ms, C ms clock, ...: each process's trace starts
		// with the runtime's.
		f := strings.Fields(line)
		if len(f) < 6 || f[0] != "init" || !strings.HasPrefix(f[2], "@") {
			continue
		}
		at, err1 := strconv.ParseFloat(strings.TrimPrefix(f[2], "@"), 64)
		took, err2 := strconv.ParseFloat(f[4], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("unreadable trace line %q", line)
		}
		if f[1] == "runtime" {
			ends = append(ends, 0)
		}
		if len(ends) > 0 {
			ends[len(ends)-1] = time.Duration((at + took) * float64(time.Millisecond))
		}
	}
	if len(ends) == 0 {
		return nil, fmt.Errorf("GODEBUG=inittrace=1 %s %s: no trace", bin, strings.Join(args, " "))
	}
	return ends, nil
}

// initSetup is the median Result.InitSetup of n runs of /bin/true at
// level, in this process.
func initSetup(level, n int) (time.Duration, error) {
	p, err := sandbox.Preset(level)
	if err != nil {
		return 0, err
	}
	var d []time.Duration
	for range n {
		res, err := sandbox.Run(context.Background(), p, sandbox.Command{Path: "/bin/true"})
		if err != nil {
			return 0, err
		}
		if res.InitSetup == 0 {
			return 0, fmt.Errorf("the run (%s) did not report it", res.Reason)
		}
		d = append(d, res.InitSetup)
	}
	return quantile(d, 0.5), nil
}

// initBinary names the init this process's runs start.
func initBinary() string {
	self, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	sib := strings.TrimSuffix(self, "startbench") + "sandboxlab-init"
	if _, err := os.Stat(sib); err == nil && strings.HasSuffix(self, "/startbench") {
		return sib
	}
	return "this benchmark's own binary, as no sandboxlab-init is beside it"
}
