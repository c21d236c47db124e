package main

import (
	"bytes"
	"flag"
	"io"
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"sandboxlab/cmd/internal/cli"
	"sandboxlab/cmd/internal/harnesscmd"
	"sandboxlab/cmd/internal/sandboxcmd"
)

// commands are the commands of both binaries.
var commands = append(sandboxcmd.Commands(), harnesscmd.Commands()...)

// help returns what 'sandboxlab ARGS --help' prints, and where.
func help(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	var out, errs bytes.Buffer
	code := cli.Dispatch(t.Context(), cli.Sandbox, commands, append(args, "--help"), &out, &errs)
	assert.Check(t, is.Equal(code, 0), "sandboxlab %s --help", strings.Join(args, " "))
	return out.String(), errs.String()
}

// TestHelp pins 'sandboxlab --help' and every command's --help in golden
// files under testdata/help: go test ./cmd/sandboxlab -update rewrites
// them (after a check, an attack, a defect or a profile is added, too:
// the help lists them).
func TestHelp(t *testing.T) {
	out, _ := help(t)
	golden.Assert(t, out, "help/sandboxlab.golden")
	for _, c := range commands {
		_, errs := help(t, strings.Fields(c.Name)...)
		golden.Assert(t, errs, "help/"+strings.ReplaceAll(c.Name, " ", "-")+".golden")
	}
}

// TestHelpTellsTheTruth: every flag a command has is on its usage line,
// and every flag its help names is one it has, or, quoted with another
// command's name ('run --session'), one that command has.
func TestHelpTellsTheTruth(t *testing.T) {
	flags := map[string]map[string]bool{}
	for _, c := range commands {
		o, _ := c.New()
		fs := c.FlagSet(o, io.Discard)
		flags[c.Name] = map[string]bool{}
		fs.VisitAll(func(f *flag.Flag) { flags[c.Name][f.Name] = true })
	}
	named := regexp.MustCompile(`(?:^|[\s(\[|])--?([a-z][a-z-]*)`)
	quoted := regexp.MustCompile(`'(?:sandboxlab )?([a-z]+(?: merge)?) ([^']*)'`)
	for _, c := range commands {
		_, text := help(t, strings.Fields(c.Name)...)
		usage, _, _ := strings.Cut(text, "\n")
		for name := range flags[c.Name] {
			assert.Check(t, regexp.MustCompile(`-`+name+`\b`).MatchString(usage), "%s: -%s is missing from the usage line: %s", c.Name, name, usage)
		}
		text = quoted.ReplaceAllStringFunc(text, func(q string) string {
			m := quoted.FindStringSubmatch(q)
			other, ok := flags[m[1]]
			if !ok {
				return q // not a command: an example, checked as this command's
			}
			for _, f := range named.FindAllStringSubmatch(m[2], -1) {
				assert.Check(t, other[f[1]], "%s: %s names -%s, which %s has not", c.Name, q, f[1], m[1])
			}
			return ""
		})
		// The example of --sandbox custom: and the shipped profiles'
		// descriptions name other programs' flags.
		text = regexp.MustCompile(`(?s)--sandbox 'custom:.*?--'`).ReplaceAllString(text, "--sandbox")
		text = regexp.MustCompile(`(?s)\nprofiles:\n.*?\n\n`).ReplaceAllString(text, "\n")
		for _, f := range named.FindAllStringSubmatch(text, -1) {
			assert.Check(t, flags[c.Name][f[1]] || f[1] == "help", "%s: its help names -%s, which it has not", c.Name, f[1])
		}
	}
}

// TestCommandsImplemented: each binary implements exactly the commands
// cli.Commands gives it, and every command is implemented once.
func TestCommandsImplemented(t *testing.T) {
	for b, impl := range map[cli.Binary][]cli.Command{cli.Sandbox: sandboxcmd.Commands(), cli.Harness: harnesscmd.Commands()} {
		var have, want []string
		for _, c := range impl {
			have = append(have, c.Name)
		}
		for _, info := range cli.Commands {
			if info.In == b {
				want = append(want, info.Name)
			}
		}
		assert.Check(t, is.DeepEqual(have, want), "%s", b)
	}
	assert.Check(t, is.Len(commands, len(cli.Commands)))
}
