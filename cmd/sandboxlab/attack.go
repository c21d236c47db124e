package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"sandboxlab/attacks"
	"sandboxlab/report"
	"sandboxlab/sandbox"
)

func init() {
	register(command{name: "attack", summary: "run the 16 attack programs at each level and print the matrix", run: attackCmd})
}

func attackCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("attack", "[--only ID,...] [--levels 0-5] "+formatUsage+" [--defect ID]",
		"Runs each attack program (Python, through the sandbox as agent code is run) at each level\n"+
			"and judges it from evidence on the host, never from the program's word. Prints one row per\n"+
			"attack, one column per level (escaped, or what stopped it), the first level that stops it and\n"+
			"the level expected to; ESCAPED marks an escape at or above that level, and with --format junit\n"+
			"such a cell is a failed testcase. Cells run one at a time; everything a cell started is removed\n"+
			"after it. Progress (one line per cell) goes to stderr on a terminal. Exits 0 when the matrix\n"+
			"ran, whatever it says, and 1 on a usage or internal error.\n\n"+
			"attacks (first level that stops each on the correct sandbox: what makes it an escape):\n"+
			attackList(), stderr)
	only := fs.String("only", "", "run only the attacks `ID,...` (default: all)")
	levels := fs.String("levels", fmt.Sprintf("0-%d", sandbox.Levels-1), "run only the `LEVELS`: levels and ranges, such as 0-5, 3 or 0,4-5")
	out := outputFlags(fs, "attack")
	defect := defectFlag(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "sandboxlab attack: unexpected argument %q (sandboxlab attack --help)\n", fs.Arg(0))
		return exitInternal
	}
	if err := out.check(); err != nil {
		fmt.Fprintf(stderr, "sandboxlab attack: %v\n", err)
		return exitInternal
	}
	opts := attacks.Options{}
	var err error
	if opts.Only, err = attacks.ParseOnly(*only); err != nil {
		fmt.Fprintf(stderr, "sandboxlab attack: --only: %v\n", err)
		return exitInternal
	}
	if opts.Levels, err = attacks.ParseLevels(*levels); err != nil {
		fmt.Fprintf(stderr, "sandboxlab attack: --levels: %v\n", err)
		return exitInternal
	}
	if !enableDefect(*defect, stderr) {
		return exitInternal
	}
	if p := out.progress(stderr); p.on {
		unique := map[string]bool{}
		for _, id := range opts.Only {
			unique[id] = true
		}
		rows, levels := len(unique), len(opts.Levels)
		if rows == 0 {
			rows = len(attacks.All())
		}
		if levels == 0 {
			levels = sandbox.Levels
		}
		done := 0
		opts.Progress = func(c report.Cell) {
			done++
			verdict := "escaped"
			if !c.Escaped {
				verdict = "stopped (" + c.StoppedBy + ")"
			}
			p.line("%s %-22s %s  %d ms", counter(done, rows*levels), c.Name(), verdict, c.MS)
		}
	}
	rep, err := attacks.Run(ctx, opts)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			err = errors.New("interrupted")
		}
		fmt.Fprintf(stderr, "sandboxlab attack: %v\n", err)
		return exitInternal
	}
	if err := out.write(stdout, rep); err != nil {
		fmt.Fprintf(stderr, "sandboxlab attack: %v\n", err)
		return exitInternal
	}
	return exitOK
}

// attackList describes every attack for --help.
func attackList() string {
	var b strings.Builder
	for _, a := range attacks.All() {
		fmt.Fprintf(&b, "  %-19s L%d: %s\n", a.ID, a.FirstStop, a.Escapes)
	}
	return strings.TrimRight(b.String(), "\n")
}
