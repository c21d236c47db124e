package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

func init() {
	register(command{name: "session", summary: "make, remove or garbage-collect session directories that several runs share", run: sessionCmd})
	register(command{name: "files", summary: "list, read, write or delete files of a session through the file API", run: filesCmd})
}

// openSession resumes the session in dir, or makes a fresh one.
func openSession(policy sandbox.Policy, dir string) (*sandbox.Session, error) {
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		dir = abs
	}
	return sandbox.NewSession(sandbox.Options{Policy: policy, Dir: dir})
}

func sessionCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("session", "new | rm DIR | gc [--root DIR]",
		"'new' makes a session directory and prints its path; pass it to 'run --session' and\n"+
			"'files --session'. It is kept until 'rm' closes it: 'rm' removes the directory and\n"+
			"everything in it. 'gc' removes the session directories in --root whose owner (the\n"+
			"process that made them, recorded in DIR.owner) has ended without closing them, and prints\n"+
			"them; every sandboxlab command does that for $TMPDIR quietly at start, and so does every\n"+
			"new session for its own root. Kept sessions and directories this program did not make\n"+
			"are never removed.", stderr)
	root := fs.String("root", "", "for gc: the `DIR` holding the sessions (default $TMPDIR or /tmp)")
	if stop, err := parseFlags(fs, args); stop {
		return err
	}
	switch {
	case fs.NArg() == 1 && fs.Arg(0) == "gc":
		removed, err := sandbox.CollectGarbage(*root)
		for _, dir := range removed {
			fmt.Fprintln(stdout, dir)
		}
		return err
	case fs.NArg() == 1 && fs.Arg(0) == "new":
		s, err := sandbox.NewSession(sandbox.Options{Policy: sandbox.MustPreset(0), Keep: true})
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, s.Dir())
		return nil
	case fs.NArg() == 2 && fs.Arg(0) == "rm":
		s, err := openSession(sandbox.MustPreset(0), fs.Arg(1))
		if err != nil {
			return err
		}
		return s.Close()
	}
	fs.Usage()
	return exit(verdict.ExitInternal)
}

func filesCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("files", "--session DIR ls | get NAME | put NAME [FILE] | rm NAME",
		"Drives the host-side file API of a session, as the tool does between runs: names are\n"+
			"relative to the session directory; '..' escapes, absolute names, links and anything but\n"+
			"regular files are refused. 'put' reads FILE, or standard input without one.", stderr)
	dir := fs.String("session", "", "the session directory `DIR` (from 'sandboxlab session new')")
	if stop, err := parseFlags(fs, args); stop {
		return err
	}
	if *dir == "" || fs.NArg() == 0 {
		fs.Usage()
		return exit(verdict.ExitInternal)
	}
	s, err := openSession(sandbox.MustPreset(0), *dir)
	if err != nil {
		return err
	}
	op, rest := fs.Arg(0), fs.Args()[1:]
	switch {
	case op == "ls" && len(rest) == 0:
		files, err := s.List()
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		for _, f := range files {
			fmt.Fprintf(tw, "%s\t%d\t%s\n", f.Type, f.Size, f.Name)
		}
		return tw.Flush()
	case op == "get" && len(rest) == 1:
		b, err := s.ReadFile(rest[0])
		if err != nil {
			return err
		}
		_, err = stdout.Write(b)
		return err
	case op == "put" && (len(rest) == 1 || len(rest) == 2):
		var r io.Reader = os.Stdin
		if len(rest) == 2 {
			f, err := os.Open(rest[1])
			if err != nil {
				return err
			}
			defer f.Close()
			r = f
		}
		b, err := io.ReadAll(io.LimitReader(r, sandbox.MaxFileSize+1))
		if err != nil {
			return err
		}
		return s.WriteFile(rest[0], b)
	case op == "rm" && len(rest) == 1:
		return s.Remove(rest[0])
	}
	return usagef("want ls, get NAME, put NAME [FILE] or rm NAME")
}
