package harnesscmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"sandboxlab/cmd/internal/cli"
	"sandboxlab/harness"
	"sandboxlab/report"
)

func mergeHelp() string {
	return "Combines the JSON reports of 'mutate --shard K/N' runs (K = 1 to N, each once) into one report and\n" +
		"one gate, the same as the unsharded run's, in any of mutate's formats (the merged report is a whole\n" +
		"mutate report: --format html and stryker included). Refuses shards made from other predictions,\n" +
		"another build, other suites or other settings, and shards whose baselines disagree. Exit codes as\n" +
		"mutate's; with --fail-on the gate is decided again under that policy. The shards of\n" +
		"'mutate --sandbox NAME --shard K/N' merge the same way into the flag mutation's report (--fail-on\n" +
		"aside), refused when their profiles, builds, settings or baselines differ."
}

// mergeOptions are the flags of 'mutate merge' and the shards it names.
type mergeOptions struct {
	output
	gateFlag
	shards []string
}

func (o *mergeOptions) SetFlags(fs *flag.FlagSet) {
	o.gateFlag.setFlags(fs)
	// The same report as mutate's, so the same formats; it runs nothing,
	// so it has no progress to show.
	o.output.setFlags(fs, "mutate", &report.Mutation{}, false)
	// The shards of 'mutate --sandbox' merge too, into their report.
	o.output.formats = append(o.output.formats, report.SARIF)
	fs.Lookup("format").Usage = "report `FORMAT` on stdout: text, markdown, json, junit, html, stryker, sarif (sarif for a flag mutation's shards)"
}

func (o *mergeOptions) Validate(cl cli.Line) error {
	if err := cli.FirstError(o.output.validate(), o.gateFlag.validate()); err != nil {
		return err
	}
	if len(cl.Args) == 0 {
		return errors.New("name the shards' JSON reports")
	}
	o.shards = cl.Args
	return nil
}

// mergeCmd is 'mutate merge': the shards' reports as one.
func mergeCmd(_ context.Context, o *mergeOptions, stdout, stderr io.Writer) error {
	if flags, err := readFlagShards(o.shards); err != nil || flags != nil {
		if err != nil {
			return err
		}
		return mergeFlagsCmd(flags, o, stdout)
	}
	if o.f == report.SARIF {
		return errors.New("--format sarif: only the shards of mutate --sandbox have it")
	}
	var shards []*report.Mutation
	for _, f := range o.shards {
		m, err := readMutation(f)
		if err != nil {
			return err
		}
		shards = append(shards, m)
	}
	m, err := harness.Merge(shards, o.failOn)
	if err != nil {
		return fmt.Errorf("merging: %w", err)
	}
	return finishMutate(m, &o.output, stdout, stderr)
}
