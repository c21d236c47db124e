package sandboxcmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"sandboxlab/cmd/internal/cli"
	"sandboxlab/sandbox"
	"sandboxlab/sandbox/egress"
	"sandboxlab/verdict"
)

func runHelp() string {
	return "Runs CMD under the level's policy and reports how it ended. Without --json it prints the\n" +
		"program's output and a status line, and exits with the program's status (128+signal when\n" +
		"it was killed, 125 when the sandbox refused or failed to run it, 126 when CMD cannot be\n" +
		"executed, 127 when it is not found, 75 when the machine was busy: every run slot of the\n" +
		"host stayed taken, nothing ran, try again). A bare CMD is looked up as the sandbox sees\n" +
		"it: in the PATH the program gets, never in a directory the level hides. The flags end at\n" +
		"CMD: what follows is CMD's own.\n\n" +
		"With --json it prints one JSON object whatever happens, and exits 0 whenever the run took\n" +
		"place (else 75, 125, 126 or 127 as above). Its fields: level; reason (exited, timeout, cpu,\n" +
		"memory, processes, disk, signal, refused, not_found, busy); message (why it was refused,\n" +
		"not found or busy); queued_ms (how long it waited for a run slot before its clock started);\n" +
		"exit_code (-1 when a signal ended it or it never ran); signal; timed_out; stopped_by (init,\n" +
		"supervisor or backstop, when the sandbox stopped it); for a timeout kill_late_ms (how long after\n" +
		"the deadline the run was seen to end), init_late_ms (at L6, when the init stopped it: how long\n" +
		"after the deadline the init woke), run_queue_wait_ms, run_queue_tasks, run_queue_wait_max_ms\n" +
		"and starved; oom; stdout and stderr (at most the level's budget of characters, the middle cut\n" +
		"with a marker); stdout_truncated, stderr_truncated; stdout_bytes, stderr_bytes (all the\n" +
		"program wrote);\n" +
		"wall_ms, cpu_ms; files (the session directory afterwards: name, size, type) and\n" +
		"files_truncated; at L6 also memory_peak (bytes), pids_peak and forks_refused as the\n" +
		"kernel counted them in the run's control group, and landlock_abi; with --allow, network\n" +
		"(the proxy's log: time, method, host, port, allowed, rule, status, sent, received,\n" +
		"credential, note, error) and network_dropped.\n\n" + networkHelp + "\n\n" + LevelHelp + "\n" + exposedHelp()
}

// runOptions are run's flags and the command line to run.
type runOptions struct {
	cli.DefectFlag
	level   int
	json    bool
	session string
	net     NetworkFlags

	argv   []string       // CMD and its arguments
	policy sandbox.Policy // the level's, with the network flags, validated
}

func (o *runOptions) SetFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.level, "level", 6, "isolation level `N`, 0 (bare) to 6 (hardened; see above)")
	fs.BoolVar(&o.json, "json", false, "print the result as one JSON object")
	fs.StringVar(&o.session, "session", "", "run in the session directory `DIR` made by 'sandboxlab session new' (kept afterwards)")
	o.net.AddFlags(fs)
	o.DefectFlag.AddFlag(fs)
}

func (o *runOptions) Validate(cl cli.Line) error {
	if len(cl.Args) == 0 {
		return errors.New("no command given (sandboxlab run --help)")
	}
	o.argv = cl.Args
	if err := o.DefectFlag.Check(); err != nil {
		return err
	}
	policy, err := sandbox.Preset(o.level)
	if err != nil {
		return fmt.Errorf("--level: %w", err)
	}
	if err := o.net.Apply(&policy.Network); err != nil {
		return err
	}
	if err := policy.Validate(); err != nil {
		return err
	}
	o.policy = policy
	return nil
}

func runCmd(ctx context.Context, o *runOptions, stdout, stderr io.Writer) error {
	if o.policy.Network.Egress() && !egress.Linked() {
		// The proxy is in sandboxlab-harness, which has this command too:
		// sandboxlab links neither it nor the HTTP and TLS code that
		// every other run would pay for at its start.
		return cli.Exit(cli.ExecSibling(cli.Harness, os.Args[1:], stderr))
	}
	if err := o.Enable(); err != nil {
		return err
	}
	res, err := runOnce(ctx, o.policy, o.session, o.argv)
	if res == nil {
		// Nothing ran: the program was not found or could not start, or
		// the sandbox refused. JSON still gets its object.
		if o.json {
			writeJSON(stdout, sandbox.NotRun(o.policy, err))
		}
		return cli.FailWith(startFailure(err), err)
	}
	if o.json {
		writeJSON(stdout, res)
		if err != nil {
			fmt.Fprintf(stderr, "sandboxlab run: %v\n", err)
		}
		switch res.Reason {
		case sandbox.ReasonRefused, sandbox.ReasonInitLost:
			return cli.Exit(verdict.ExitRunRefused)
		case sandbox.ReasonBusy:
			return cli.Exit(verdict.ExitRunBusy)
		}
		return nil
	}
	io.WriteString(stdout, res.Stdout)
	io.WriteString(stderr, res.Stderr)
	for _, r := range res.Network {
		fmt.Fprintln(stderr, "sandboxlab: network:", r)
	}
	if res.NetworkDropped > 0 {
		fmt.Fprintf(stderr, "sandboxlab: network: %d more requests, past the log's limit\n", res.NetworkDropped)
	}
	fmt.Fprintln(stderr, statusLine(res))
	return cli.Exit(exitStatus(res))
}

// networkHelp says what --allow does, for --help.
const networkHelp = `network by allowlist (--allow, level 4 and up):
  The program's network namespace gets loopback and the egress proxy at ` + sandbox.EgressProxy + `, which
  HTTP_PROXY and HTTPS_PROXY name (urllib, curl and most clients use it by themselves). The
  proxy runs in this process, outside the sandbox: it tunnels CONNECT (HTTPS, not inspected)
  and forwards plain HTTP, decides each request by the rules (a deny beats an allow),
  resolves names itself, and logs every request; the log is printed after the program's
  output, one "sandboxlab: network:" line each. Every other connection fails.`

// LevelHelp says what each level adds, for --help.
const LevelHelp = `levels (each adds to the one below):
  0  bare: a 4 s watchdog
  1  limits: wall 1.5 s, CPU 2 s/3 s, 256 MiB address space, 10 MiB files, 64 files,
     output cap, leftovers swept, the whole tree killed on timeout
  2  env and cwd: environment scrubbed, a private 0700 session directory
  3  processes: own PID namespace and /proc, at most 16 processes
  4  network: no network at all, not even loopback (with --allow: the allowed destinations
     only, through the egress proxy)
  5  filesystem and capabilities: chosen paths hidden; private /tmp, /var/tmp, /dev/shm and
     /run (nothing written there reaches the host; host sockets and other sessions out of
     sight); own IPC and UTS namespaces; a fresh session keyring; no capabilities
  6  hardened (the default): a root of its own: a read-only tmpfs holding only the host
     paths below (read-only), /dev's usual devices, a fresh /proc, the session and the
     private directories, nothing else of the host; the disk capped inside the run (the
     session directory is a filesystem of the session's quota and 10,000 files: a write
     past either fails, and the run ends with reason disk); a system-call filter (an
     allowlist, seccomp-bpf with argument rules); Landlock (read the exposed paths, write
     only the session and private directories, no TCP but the egress proxy's port);
     a control group per run (256 MiB of real memory instead of address space, a hard cap of
     16 processes, an equal CPU share). Refused, with the reason, where the machine cannot
     give one of them (control groups and the session's filesystem need root, or for the
     groups a delegated cgroup v2 subtree)`

// exposedHelp lists the host paths of L6's root, for --help.
func exposedHelp() string {
	var b strings.Builder
	b.WriteString("L6's root holds these host paths (read-only; those missing are skipped):")
	col := 80
	for _, p := range sandbox.DefaultExposed() {
		if col+1+len(p) > 92 {
			b.WriteString("\n    ")
			col = 4
		}
		b.WriteString(" " + p)
		col += 1 + len(p)
	}
	return b.String()
}

// runOnce runs args in a fresh session (closed afterwards) or in the
// session dir. A nil Result means nothing ran, and err says why.
func runOnce(ctx context.Context, policy sandbox.Policy, dir string, args []string) (*sandbox.Result, error) {
	// As the sandbox sees it: the caller's PATH may put first a shim the
	// program cannot reach.
	path, err := sandbox.LookPath(policy, args[0], nil)
	if err != nil {
		return nil, err
	}
	s, err := openSession(policy, dir)
	if err != nil {
		return nil, err
	}
	res, err := s.Run(ctx, sandbox.Command{Path: path, Args: args[1:]})
	if dir == "" {
		if cerr := s.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}
	return res, err
}

// writeJSON prints r as one indented JSON object.
func writeJSON(w io.Writer, r *sandbox.Result) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(r)
}

// statusLine sums a result up in one line for people.
func statusLine(r *sandbox.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "sandboxlab: L%d %s", r.Level, r.Reason)
	switch {
	case r.Reason == sandbox.ReasonRefused:
		fmt.Fprintf(&b, ": %s", r.Message)
	case r.Signal != "":
		fmt.Fprintf(&b, " (%s)", r.Signal)
	default:
		fmt.Fprintf(&b, " (status %d)", r.ExitCode)
	}
	if r.TimedOut {
		b.WriteString(", timed out")
	}
	if r.Starved {
		fmt.Fprintf(&b, " starved (the machine was busy: %d ms waiting for a CPU over %d threads)", r.RunQueueWait.Milliseconds(), r.RunQueueTasks)
	}
	if r.OOM {
		b.WriteString(", out of memory")
	}
	fmt.Fprintf(&b, ", wall %d ms, cpu %d ms", r.Wall.Milliseconds(), r.CPU.Milliseconds())
	for _, s := range []struct {
		name  string
		cut   bool
		bytes int64
	}{{"stdout", r.StdoutTruncated, r.StdoutBytes}, {"stderr", r.StderrTruncated, r.StderrBytes}} {
		if s.cut {
			fmt.Fprintf(&b, ", %s cut (%d bytes written)", s.name, s.bytes)
		}
	}
	return b.String()
}

// exitStatus maps a result to the exit status of 'run', as timeout(1) and
// container tools do.
func exitStatus(r *sandbox.Result) int {
	switch {
	case r.Reason == sandbox.ReasonRefused, r.Reason == sandbox.ReasonInitLost:
		return verdict.ExitRunRefused // the sandbox failed, whatever the program did
	case r.Reason == sandbox.ReasonBusy:
		return verdict.ExitRunBusy
	case r.Signal != "":
		return 128 + int(unix.SignalNum(r.Signal))
	}
	return r.ExitCode
}

// startFailure is the exit status for a run that did not start, as
// shells and timeout(1) have it: 127 for a program that is not there, 126
// for one that cannot be executed, 125 when the sandbox itself failed.
func startFailure(err error) int {
	switch {
	case errors.Is(err, sandbox.ErrUnavailable):
		return verdict.ExitRunRefused
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, exec.ErrNotFound):
		return verdict.ExitRunNotFound
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOEXEC):
		return verdict.ExitRunNoExec
	}
	return verdict.ExitRunRefused
}

// NetworkFlags are the flags of the network allowlist (run, mcp).
type NetworkFlags struct {
	allow, deny, resolve, credential cli.ListFlag
}

func (f *NetworkFlags) AddFlags(fs *flag.FlagSet) {
	fs.Var(&f.allow, "allow", "let the program reach `HOST:PORT` through the egress proxy (repeatable; level 4 and up): a name, *.name for its subdomains only, or an IP address; the port a number or *")
	fs.Var(&f.deny, "deny", "refuse `HOST:PORT` even where --allow admits it (repeatable; a deny wins; an address also refuses every name that resolves to it)")
	fs.Var(&f.resolve, "resolve", "have the proxy connect to ADDR for the name NAME (`NAME=ADDR`, repeatable), before DNS is asked; DNS answers inside the host's own networks are refused")
	fs.Var(&f.credential, "credential", "add the header HEADER, whose value is this command's environment variable VAR, to the program's plain-HTTP requests for DEST (`DEST=HEADER:VAR`, repeatable); the program never holds it")
}

// Apply puts the flags into n.
func (f NetworkFlags) Apply(n *sandbox.Network) error {
	n.Allow, n.Deny = f.allow, f.deny
	for _, kv := range f.resolve {
		name, addr, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("--resolve %q: want NAME=ADDR", kv)
		}
		if n.Resolve == nil {
			n.Resolve = map[string]string{}
		}
		n.Resolve[name] = addr
	}
	for _, kv := range f.credential {
		dest, rest, ok1 := strings.Cut(kv, "=")
		header, env, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 || env == "" {
			return fmt.Errorf("--credential %q: want DEST=HEADER:VAR, VAR naming an environment variable that holds the value", kv)
		}
		value := os.Getenv(env)
		if value == "" {
			return fmt.Errorf("--credential %s: the environment variable %s is empty or not set", dest, env)
		}
		n.Credentials = append(n.Credentials, sandbox.Credential{Destination: dest, Header: header, Value: value})
	}
	return nil
}
