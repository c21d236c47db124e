package harnesscmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/cmd/internal/cli"
	"sandboxlab/cmd/internal/sandboxcmd"
	"sandboxlab/mcpserver"
	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

func mcpHelp() string {
	return "Serves the Model Context Protocol on stdin and stdout, for an agent (Claude, Cursor, codex, any\n" +
		"MCP client) that starts it as a server. One connection is one sandbox session at the level's\n" +
		"policy: its working directory keeps files between calls, and is removed when the client\n" +
		"disconnects, is killed, or this process gets SIGINT, SIGTERM or SIGHUP; a run in progress is\n" +
		"stopped with its whole tree first. The tools: run_python (code) and run_shell (a command line\n" +
		"for /bin/sh), the careful tool: a failed, stopped or refused run is a result with isError and\n" +
		"says why and what to try; list_files, read_file, write_file and delete_file, through the host\n" +
		"file API and its guards. A stream the reply cuts is kept in the session (output/) and named.\n" +
		"The tools' descriptions state the limits that apply; --timeout, --cpu, --memory and --quota\n" +
		"raise them (for builds). Before serving, one run is tried: where the machine cannot give the\n" +
		"level (L6 needs root with cgroup v1, or a delegated cgroup v2 subtree) it exits 125 with the\n" +
		"reason, and runs nothing; choose a lower --level there. While the client thinks, the next\n" +
		"run's namespaces, control group and init are made ahead (one waits at a time, for the program\n" +
		"last run); each is used by one call only, and a call's clock starts when it is handed over.\n\n" + mcpHTTPHelp + "\n\n" +
		mcpNetworkHelp + "\n\n" + sandboxcmd.LevelHelp
}

// mcpHTTPHelp says what --listen does.
const mcpHTTPHelp = `over HTTP (--listen ADDR --token-file FILE):
  Serves the same tools over Streamable HTTP at ` + mcpserver.Path + `, for agents on other machines,
  instead of stdio. FILE holds one "NAME TOKEN" a line (mode 600; tokens of at least 32
  characters, such as 32 random bytes in hex); every request must carry one as "Authorization: Bearer
  TOKEN", or it is answered 401. A sandbox lives by a handle: create_sandbox returns one, the
  other tools take it as their sandbox argument, close_sandbox removes it, and it belongs to
  the principal that made it (another's handle is not found). Each principal holds at most
  --max-sandboxes sandboxes and --max-runs runs at once; a sandbox unused for --idle is
  removed. A non-loopback ADDR needs --tls-cert and --tls-key, or --tls-proxy when a TLS proxy
  in front terminates TLS. SIGINT or SIGTERM stops the runs, answers what was received and
  removes every sandbox; a killed server's are removed when the next one starts.`

// mcpNetworkHelp says what --allow does for the server's runs.
const mcpNetworkHelp = `network by allowlist (--allow, level 4 and up):
  As for 'sandboxlab run --allow': the program reaches the allowed destinations only, through
  the egress proxy at ` + sandbox.EgressProxy + ` (HTTP_PROXY and HTTPS_PROXY name it), which runs in this
  process, decides each request by the rules (a deny beats an allow), resolves names itself
  and logs every request. Each call's requests are in its reply, and in its structuredContent
  (network). Every other connection fails. The tools' descriptions name the destinations.`

// mcpOptions are mcp's flags.
type mcpOptions struct {
	level   int
	timeout time.Duration
	cpu     time.Duration
	memory  string
	quota   string
	net     sandboxcmd.NetworkFlags

	policy     sandbox.Policy // the level's, with the flags, validated
	quotaBytes int64

	// Over HTTP.
	listen          string
	tokenFile       string
	tlsCert, tlsKey string
	tlsProxy        bool
	limits          mcpserver.Limits
	tokens          *mcpserver.Tokens
}

func (o *mcpOptions) SetFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.level, "level", 6, "isolation level `N`, 0 (bare) to 6 (hardened; see above)")
	fs.DurationVar(&o.timeout, "timeout", 0, "stop a run after `D` of wall-clock time (such as 30s or 5m; default the level's, 1.5s)")
	fs.DurationVar(&o.cpu, "cpu", 0, "stop a run after `D` of CPU time, whole seconds (default the level's, 2s)")
	fs.StringVar(&o.memory, "memory", "", "let a run use `SIZE` of memory (such as 512M or 2G; default the level's, 256M): real memory at level 6, address space below")
	fs.StringVar(&o.quota, "quota", "", "let the session's directory hold `SIZE` (default 64M); runs are refused beyond it until files are deleted")
	o.net.AddFlags(fs)
	fs.StringVar(&o.listen, "listen", "", "serve over Streamable HTTP on `ADDR` (such as 127.0.0.1:8080) instead of stdio")
	fs.StringVar(&o.tokenFile, "token-file", "", "with --listen: the principals and their bearer tokens, one `FILE` line \"NAME TOKEN\" each")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "with --listen: serve HTTPS with the certificate in `FILE` (PEM)")
	fs.StringVar(&o.tlsKey, "tls-key", "", "with --listen: the certificate's private key, in `FILE` (PEM)")
	fs.BoolVar(&o.tlsProxy, "tls-proxy", false, "with --listen: a TLS proxy in front terminates TLS, so a non-loopback address may serve HTTP")
	fs.IntVar(&o.limits.Sandboxes, "max-sandboxes", mcpserver.DefaultLimits.Sandboxes, "with --listen: the sandboxes one principal holds at once, at most `N`")
	fs.IntVar(&o.limits.Runs, "max-runs", mcpserver.DefaultLimits.Runs, "with --listen: the runs one principal has going at once, at most `N`")
	fs.DurationVar(&o.limits.Idle, "idle", mcpserver.DefaultLimits.Idle, "with --listen: remove a sandbox unused for `D`")
}

// validateHTTP checks the flags of a server over HTTP, and reads the
// token file.
func (o *mcpOptions) validateHTTP(given map[string]bool) error {
	if o.listen == "" {
		for _, f := range []string{"token-file", "tls-cert", "tls-key", "tls-proxy", "max-sandboxes", "max-runs", "idle"} {
			if given[f] {
				return fmt.Errorf("--%s: only with --listen (over stdio a connection is one sandbox)", f)
			}
		}
		return nil
	}
	switch {
	case o.tokenFile == "":
		return errors.New("--listen: needs --token-file: every request over HTTP is authenticated")
	case (o.tlsCert == "") != (o.tlsKey == ""):
		return errors.New("--tls-cert and --tls-key: give both, or neither")
	case o.tlsProxy && o.tlsCert != "":
		return errors.New("--tls-proxy: not with --tls-cert, which serves TLS here")
	case o.limits.Sandboxes < 1 || o.limits.Runs < 1:
		return errors.New("--max-sandboxes and --max-runs: want at least 1")
	case o.limits.Idle < time.Second:
		return fmt.Errorf("--idle %v: want at least 1s", o.limits.Idle)
	}
	if err := mcpserver.CheckAddress(o.listen, o.tlsCert != "", o.tlsProxy); err != nil {
		return err
	}
	var err error
	o.tokens, err = mcpserver.ReadTokens(o.tokenFile)
	return err
}

func (o *mcpOptions) Validate(cl cli.Line) error {
	if err := cl.NoArgs(); err != nil {
		return err
	}
	policy, err := sandbox.Preset(o.level)
	if err != nil {
		return fmt.Errorf("--level: %w", err)
	}
	if err := o.net.Apply(&policy.Network); err != nil {
		return err
	}
	if err := o.applyLimits(&policy, cl.Given); err != nil {
		return err
	}
	if o.quotaBytes, err = parseSize("--quota", o.quota, 1<<20); err != nil {
		return err
	}
	if err := policy.Validate(); err != nil {
		return err
	}
	o.policy = policy
	return o.validateHTTP(cl.Given)
}

// maxLimit bounds --timeout and --cpu: a day.
const maxLimit = 24 * time.Hour

// applyLimits puts --timeout, --cpu and --memory into p, refusing values
// the level cannot use or the machine cannot give.
func (o *mcpOptions) applyLimits(p *sandbox.Policy, given map[string]bool) error {
	if given["timeout"] {
		if o.timeout < 100*time.Millisecond || o.timeout > maxLimit {
			return fmt.Errorf("--timeout %v: want 100ms to %v", o.timeout, maxLimit)
		}
		if p.Limits.Wall > 0 {
			// The watchdog stays behind the wall clock by as much as the
			// level's, so that the wall clock is what stops a run.
			p.Watchdog = max(p.Watchdog, o.timeout+p.Watchdog-p.Limits.Wall)
			p.Limits.Wall = o.timeout
		} else {
			p.Watchdog = o.timeout // level 0: the watchdog is the only clock
		}
	}
	if p.Level == 0 && (given["cpu"] || given["memory"]) {
		return errors.New("--cpu and --memory: level 0 has no resource limits to raise; choose --level 1 or up")
	}
	if given["cpu"] {
		if o.cpu < time.Second || o.cpu > maxLimit || o.cpu%time.Second != 0 {
			return fmt.Errorf("--cpu %v: want whole seconds, 1s to %v (the kernel's CPU limit counts seconds)", o.cpu, maxLimit)
		}
		p.Limits.CPU, p.Limits.CPUHard = o.cpu, o.cpu+time.Second
	}
	if given["memory"] {
		n, err := parseSize("--memory", o.memory, 32<<20)
		if err != nil {
			return err
		}
		if total := memTotal(); total > 0 && n > total {
			return fmt.Errorf("--memory %s: more than this machine has (%d MiB)", o.memory, total>>20)
		}
		if p.Hardened.Cgroup.Memory > 0 {
			p.Hardened.Cgroup.Memory = n
		} else {
			p.Limits.AddressSpace = n
		}
	}
	return nil
}

// parseSize reads a size such as 512M, 2G or 1048576 (bytes) for flag,
// at least least bytes; "" is 0 (the default).
func parseSize(flag, s string, least int64) (int64, error) {
	if s == "" {
		return 0, nil
	}
	num, unit := s, int64(1)
	for suffix, u := range map[string]int64{"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40} {
		if v, ok := strings.CutSuffix(strings.ToUpper(s), suffix); ok {
			num, unit = v, u
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/unit {
		return 0, fmt.Errorf("%s %q: want a size such as 512M or 2G (K, M, G and T are powers of 1024; a bare number is bytes)", flag, s)
	}
	if n*unit < least {
		return 0, fmt.Errorf("%s %s: want at least %d MiB", flag, s, least>>20)
	}
	return n * unit, nil
}

// memTotal is the machine's memory in bytes, 0 if unknown.
func memTotal() int64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

func mcpCmd(ctx context.Context, o *mcpOptions, stdout, stderr io.Writer) error {
	// SIGHUP too: the terminal or the client's session went away.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGHUP)
	defer stop()
	// A client that died leaves stdout a broken pipe: the write fails
	// (EPIPE) and the server cleans up, instead of the signal killing it
	// with the session still on disk. A handler, not SIG_IGN, so that the
	// programs it runs get the default back.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	if _, err := unix.IoctlGetTermios(int(os.Stdin.Fd()), unix.TCGETS); err == nil && o.listen == "" {
		fmt.Fprintln(stderr, "sandboxlab mcp: speaking MCP (JSON-RPC, one message a line) on stdin and stdout; an MCP client starts it (see sandboxlab mcp --help)")
	}
	cfg := mcpserver.Config{Policy: o.policy, Quota: o.quotaBytes, Version: version(), Log: stderr}
	var err error
	if o.listen != "" {
		err = serveHTTP(ctx, o, cfg, stderr)
	} else {
		err = mcpserver.Serve(ctx, cfg, mcpserver.GuardedTransport(os.Stdin, stdout, 0))
	}
	if errors.Is(err, mcpserver.ErrUnavailable) {
		return cli.FailWith(verdict.ExitRunRefused, fmt.Errorf("%w; start it with a lower --level ('sandboxlab doctor' says which levels run here)", err))
	}
	return err
}

// serveHTTP serves MCP over HTTP on --listen until ctx ends.
func serveHTTP(ctx context.Context, o *mcpOptions, cfg mcpserver.Config, stderr io.Writer) error {
	l, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	scheme := "http"
	if o.tlsCert != "" {
		scheme = "https"
	}
	ready := func() {
		fmt.Fprintf(stderr, "sandboxlab mcp: serving MCP over HTTP at %s://%s%s for %s\n", scheme, l.Addr(), mcpserver.Path,
			strings.Join(o.tokens.Names(), ", "))
	}
	return mcpserver.ServeHTTP(ctx, mcpserver.HTTPConfig{Config: cfg, Tokens: o.tokens, Limits: o.limits,
		TLSCert: o.tlsCert, TLSKey: o.tlsKey, Ready: ready}, l)
}
