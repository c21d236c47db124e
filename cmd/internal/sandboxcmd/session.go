package sandboxcmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"sandboxlab/cmd/internal/cli"
	"sandboxlab/sandbox"
)

func sessionHelp() string {
	return "'new' makes a session directory and prints its path; pass it to 'run --session' and\n" +
		"'files --session'. As root its directory is, as the default level (6) wants, a filesystem\n" +
		"of its own of the quota's size and 10,000 files, mounted until 'rm'; runs at level 6 in a\n" +
		"session made otherwise are refused. It is kept until 'rm' closes it: 'rm' removes the\n" +
		"directory and everything in it, whatever the program did to it (modes, depth, FIFOs,\n" +
		"sockets, odd names), never following a link and never crossing a mount point. A directory\n" +
		"whose mode the program changed is given back 0700 when it is next used, not refused. 'gc'\n" +
		"removes the session directories in --root whose owner (the process that made them,\n" +
		"recorded in DIR.owner) has ended without closing them, and prints them; every\n" +
		"sandboxlab command does that for $TMPDIR quietly at start, and so does every new\n" +
		"session for its own root. Kept sessions and directories this program did not make are\n" +
		"never removed."
}

func filesHelp() string {
	return "Drives the host-side file API of a session, as the tool does between runs: names are\n" +
		"relative to the session directory; '..' escapes, absolute names, links and anything but\n" +
		"regular files are refused. 'put' reads FILE, or standard input without one."
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

// sessionOptions are session's flag and its verb.
type sessionOptions struct {
	root string
	verb string
	dir  string // rm's
}

func (o *sessionOptions) SetFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.root, "root", "", "for gc: the `DIR` holding the sessions (default $TMPDIR or /tmp)")
}

func (o *sessionOptions) Validate(cl cli.Line) error {
	switch a := cl.Args; {
	case len(a) == 1 && (a[0] == "new" || a[0] == "gc"):
		o.verb = a[0]
	case len(a) == 2 && a[0] == "rm":
		o.verb, o.dir = a[0], a[1]
	default:
		return errors.New("want new, rm DIR or gc [--root DIR]")
	}
	if cl.Given["root"] && o.verb != "gc" {
		return errors.New("--root is for gc")
	}
	return nil
}

func sessionCmd(_ context.Context, o *sessionOptions, stdout, _ io.Writer) error {
	switch o.verb {
	case "gc":
		removed, err := sandbox.CollectGarbage(o.root)
		for _, dir := range removed {
			fmt.Fprintln(stdout, dir)
		}
		return err
	case "new":
		// Made as the default level makes one: as root, its directory is
		// a filesystem of its own, which caps the disk inside each run.
		s, err := sandbox.NewSession(sandbox.Options{Policy: sandbox.MustPreset(sandbox.Levels - 1), Keep: true})
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, s.Dir())
		return nil
	}
	s, err := openSession(sandbox.MustPreset(0), o.dir)
	if err != nil {
		return err
	}
	return s.Close()
}

// filesOptions are files' flag and its operation.
type filesOptions struct {
	session string
	op      string
	args    []string // the operation's
}

func (o *filesOptions) SetFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.session, "session", "", "the session directory `DIR` (from 'sandboxlab session new')")
}

func (o *filesOptions) Validate(cl cli.Line) error {
	if o.session == "" {
		return errors.New("--session: name the session directory")
	}
	if len(cl.Args) > 0 {
		o.op, o.args = cl.Args[0], cl.Args[1:]
	}
	switch n := len(o.args); o.op {
	case "ls":
		if n == 0 {
			return nil
		}
	case "get", "rm":
		if n == 1 {
			return nil
		}
	case "put":
		if n == 1 || n == 2 {
			return nil
		}
	}
	return errors.New("want ls, get NAME, put NAME [FILE] or rm NAME")
}

func filesCmd(_ context.Context, o *filesOptions, stdout, _ io.Writer) error {
	s, err := openSession(sandbox.MustPreset(0), o.session)
	if err != nil {
		return err
	}
	switch o.op {
	case "ls":
		files, err := s.List()
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		for _, f := range files {
			fmt.Fprintf(tw, "%s\t%d\t%s\n", f.Type, f.Size, f.Name)
		}
		return tw.Flush()
	case "get":
		b, err := s.ReadFile(o.args[0])
		if err != nil {
			return err
		}
		_, err = stdout.Write(b)
		return err
	case "put":
		return putFile(s, o.args[0], o.args[1:])
	}
	return s.Remove(o.args[0])
}

// putFile writes the file from, or standard input without one, into the
// session as name.
func putFile(s *sandbox.Session, name string, from []string) error {
	var r io.Reader = os.Stdin
	if len(from) == 1 {
		f, err := os.Open(from[0])
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
	return s.WriteFile(name, b)
}
