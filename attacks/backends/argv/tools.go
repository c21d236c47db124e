package argv

import (
	"fmt"
	"strings"
)

// option is one entry of an arity table: how many words follow it, and
// what kind of group it makes.
type option struct {
	args int
	kind Kind
	// ns are the namespaces a group of it makes (for the drop operator).
	ns []string
	// modifier: it applies to the option after it, and joins that
	// option's group (bwrap's --perms and --size).
	modifier bool
	// optional: its argument, if any, is given only as --opt=value
	// (getopt's optional arguments).
	optional bool
}

func opt(args int) option { return option{args: args, kind: Flag} }

// bwrapAllNamespaces are the namespaces --unshare-all makes, and the
// option that makes each alone (bwrap(1): "currently equivalent with
// --unshare-user-try --unshare-ipc --unshare-pid --unshare-net
// --unshare-uts --unshare-cgroup-try").
var bwrapAllNamespaces = []struct{ ns, flag string }{
	{"user", "--unshare-user-try"}, {"ipc", "--unshare-ipc"}, {"pid", "--unshare-pid"},
	{"net", "--unshare-net"}, {"uts", "--unshare-uts"}, {"cgroup", "--unshare-cgroup-try"},
}

// bwrapOptions is bubblewrap's arity table: bwrap --help of 0.8.0, and
// the options of 0.9 to 0.11 (--argv0, the overlays, --level-prefix).
// bwrap reads no --opt=value.
var bwrapOptions = map[string]option{
	"--args": opt(1), "--argv0": opt(1), "--level-prefix": opt(0),
	"--unshare-all":  {kind: Namespaces, ns: []string{"user", "ipc", "pid", "net", "uts", "cgroup"}},
	"--share-net":    opt(0),
	"--unshare-user": {kind: Namespaces, ns: []string{"user"}}, "--unshare-user-try": {kind: Namespaces, ns: []string{"user"}},
	"--unshare-ipc": {kind: Namespaces, ns: []string{"ipc"}}, "--unshare-pid": {kind: Namespaces, ns: []string{"pid"}},
	"--unshare-net": {kind: Namespaces, ns: []string{"net"}}, "--unshare-uts": {kind: Namespaces, ns: []string{"uts"}},
	"--unshare-cgroup": {kind: Namespaces, ns: []string{"cgroup"}}, "--unshare-cgroup-try": {kind: Namespaces, ns: []string{"cgroup"}},
	"--userns": opt(1), "--userns2": opt(1), "--disable-userns": opt(0), "--assert-userns-disabled": opt(0),
	"--pidns": opt(1), "--uid": opt(1), "--gid": opt(1), "--hostname": opt(1), "--chdir": opt(1),
	"--clearenv": opt(0), "--setenv": opt(2), "--unsetenv": opt(1), "--lock-file": opt(1), "--sync-fd": opt(1),
	"--bind": opt(2), "--bind-try": opt(2), "--dev-bind": opt(2), "--dev-bind-try": opt(2),
	"--ro-bind": {args: 2, kind: ReadOnly}, "--ro-bind-try": {args: 2, kind: ReadOnly},
	"--bind-fd": opt(2), "--ro-bind-fd": {args: 2, kind: ReadOnly}, "--remount-ro": opt(1),
	"--overlay-src": opt(1), "--overlay": opt(3), "--tmp-overlay": opt(1), "--ro-overlay": opt(1),
	"--exec-label": opt(1), "--file-label": opt(1), "--proc": opt(1), "--dev": opt(1), "--tmpfs": opt(1),
	"--mqueue": opt(1), "--dir": opt(1), "--file": opt(2), "--bind-data": opt(2),
	"--ro-bind-data": {args: 2, kind: ReadOnly}, "--symlink": opt(2), "--seccomp": opt(1), "--add-seccomp-fd": opt(1),
	"--block-fd": opt(1), "--userns-block-fd": opt(1), "--info-fd": opt(1), "--json-status-fd": opt(1),
	"--new-session": {kind: Lifetime}, "--die-with-parent": {kind: Lifetime}, "--as-pid-1": opt(0),
	"--cap-add": opt(1), "--cap-drop": opt(1),
	"--perms": {args: 1, kind: Flag, modifier: true}, "--size": {args: 1, kind: Flag, modifier: true},
	"--chmod": opt(2),
}

// bwrapWritable maps each read-only bind to its writable spelling.
var bwrapWritable = map[string]string{
	"--ro-bind": "--bind", "--ro-bind-try": "--bind-try", "--ro-bind-fd": "--bind-fd", "--ro-bind-data": "--bind-data",
}

// bwrap reads bubblewrap's options: each --opt and its arguments, up to
// "--" or the first word that is not an option.
func (p *parser) bwrap() {
	for !p.done() {
		w := p.word()
		if w == "--" || !strings.HasPrefix(w, "-") {
			break
		}
		o, ok := bwrapOptions[w]
		if !ok {
			why := "bwrap option " + w + " is not in the arity table: its arguments cannot be told from the options after it"
			if name, _, eq := strings.Cut(w, "="); eq {
				why = "bwrap reads no --opt=value (" + name + " takes its arguments as separate words)"
			}
			p.rest(why)
			return
		}
		if o.modifier {
			if p.i+o.args >= len(p.words) {
				p.rest(w + " modifies the option after it, and the prefix ends before it")
				return
			}
			p.i += o.args + 1
			p.pending += o.args + 1
			continue
		}
		if !p.take(o.args, o.kind, o.ns...) {
			return
		}
	}
	if p.pending > 0 {
		p.rest("a modifier (--perms, --size) with no option after it")
		return
	}
	p.endOfOptions()
}

// firejailNamespaces and the other kinds firejail's options make; every
// firejail option is one word (--opt or --opt=value).
var firejailKinds = map[string]option{
	"--net": {kind: Namespaces, ns: []string{"net"}}, "--ipc-namespace": {kind: Namespaces, ns: []string{"ipc"}},
	"--noroot": {kind: Namespaces, ns: []string{"user"}}, "--read-only": {kind: ReadOnly},
}

// firejail reads firejail's options: each --opt or --opt=value is a
// group of its own (firejail takes no option's argument as a separate
// word), up to "--" or the first word that is not an option.
func (p *parser) firejail() {
	for !p.done() {
		w := p.word()
		if w == "--" || !strings.HasPrefix(w, "-") {
			break
		}
		if !strings.HasPrefix(w, "--") {
			p.rest("firejail's options are --opt or --opt=value; " + w + " is neither")
			return
		}
		name, _, _ := strings.Cut(w, "=")
		o, ok := firejailKinds[name]
		if !ok {
			o = opt(0)
		}
		p.add(1, o.kind, o.ns...)
	}
	p.endOfOptions()
}

// unshareLong is util-linux unshare's table (unshare --help of 2.38):
// the long options, and each short one by its letter.
var unshareLong = map[string]option{
	"--mount": {kind: Namespaces, ns: []string{"mount"}, optional: true}, "--uts": {kind: Namespaces, ns: []string{"uts"}, optional: true},
	"--ipc": {kind: Namespaces, ns: []string{"ipc"}, optional: true}, "--net": {kind: Namespaces, ns: []string{"net"}, optional: true},
	"--pid": {kind: Namespaces, ns: []string{"pid"}, optional: true}, "--user": {kind: Namespaces, ns: []string{"user"}, optional: true},
	"--cgroup": {kind: Namespaces, ns: []string{"cgroup"}, optional: true}, "--time": {kind: Namespaces, ns: []string{"time"}, optional: true},
	"--fork": opt(0), "--map-user": opt(1), "--map-group": opt(1), "--map-root-user": opt(0), "--map-current-user": opt(0),
	"--map-auto": opt(0), "--map-users": opt(1), "--map-groups": opt(1),
	"--kill-child": {kind: Lifetime, optional: true}, "--mount-proc": {kind: Flag, optional: true},
	"--propagation": opt(1), "--setgroups": opt(1), "--keep-caps": opt(0), "--root": opt(1), "--wd": opt(1),
	"--setuid": opt(1), "--setgid": opt(1), "--monotonic": opt(1), "--boottime": opt(1),
}

// unshareShort maps unshare's short options to their long ones.
var unshareShort = map[byte]string{
	'm': "--mount", 'u': "--uts", 'i': "--ipc", 'n': "--net", 'p': "--pid", 'U': "--user", 'C': "--cgroup", 'T': "--time",
	'f': "--fork", 'r': "--map-root-user", 'c': "--map-current-user", 'R': "--root", 'w': "--wd", 'S': "--setuid", 'G': "--setgid",
}

// unshare reads unshare's options (getopt_long with "+": the first word
// that is not an option begins the program).
func (p *parser) unshare() {
	for !p.done() {
		w := p.word()
		if w == "--" || !strings.HasPrefix(w, "-") || w == "-" {
			break
		}
		var ok bool
		if strings.HasPrefix(w, "--") {
			ok = p.getoptLong(unshareLong, "unshare")
		} else {
			ok = p.unshareCluster()
		}
		if !ok {
			return
		}
	}
	p.endOfOptions()
}

// getoptLong groups a long option of a getopt_long table: --opt=value
// is one word; a required argument may also be the next word.
func (p *parser) getoptLong(table map[string]option, tool string) bool {
	w := p.word()
	name, _, eq := strings.Cut(w, "=")
	o, ok := table[name]
	switch {
	case !ok:
		p.rest(tool + " option " + name + " is not in the arity table: its arguments cannot be told from the options after it")
		return false
	case eq && o.args == 0 && !o.optional:
		p.rest(name + " takes no argument")
		return false
	case eq || o.optional:
		p.add(1, o.kind, o.ns...)
		return true
	}
	return p.take(o.args, o.kind, o.ns...)
}

// unshareCluster groups a word of short options (-Urf, -wDIR, -w DIR).
func (p *parser) unshareCluster() bool {
	w := p.word()
	var ns []string
	kind := Flag
	for j := 1; j < len(w); j++ {
		long, ok := unshareShort[w[j]]
		if !ok {
			p.rest(fmt.Sprintf("unshare has no short option -%c", w[j]))
			return false
		}
		o := unshareLong[long]
		ns = append(ns, o.ns...)
		if o.kind == Namespaces {
			kind = Namespaces
		}
		if o.args > 0 {
			if j+1 < len(w) { // the rest of the word is its argument
				break
			}
			return p.take(1, kind, ns...)
		}
	}
	if len(ns) < 2 {
		ns = nil // one namespace: removing the group drops it
	}
	p.add(1, kind, ns...)
	return true
}

// goFlag is a flag of Go's flag package: a bool (one word: -x, -x=false)
// or a value (-x=v, or -x and the next word).
type goFlag struct {
	value bool
	kind  Kind
	ns    []string
}

// runscGlobal is runsc's table of top-level flags ('runsc flags' of
// release 20221212; a name with value: true takes an argument).
var runscGlobal = goTable("EXPERIMENTAL-afxdp TESTONLY-allow-packet-endpoint-write TESTONLY-unsafe-nonroot allow-flag-override "+
	"alsologtostderr buffer-pooling cgroupfs cpu-num-from-quota debug enable-core-tags fsgofer-host-uds fuse gso ignore-cgroups "+
	"lisafs log-packets net-raw oci-seccomp overlay profile rootless rx-checksum-offload software-gso strace strace-event "+
	"systemd-cgroup tx-checksum-offload version vfs2 directfs",
	"TESTONLY-test-name-env coverage-fd coverage-report dcache debug-command debug-log debug-log-fd debug-log-format fdlimit "+
		"file-access file-access-mounts gvisor-gro host-fifo host-uds log log-fd log-format network num-network-channels overlay2 "+
		"panic-log panic-log-fd panic-signal pcap-log platform platform_device_path pod-init-config profile-block profile-cpu "+
		"profile-heap profile-mutex qdisc ref-leak-mode root strace-log-size strace-syscalls trace traceback watchdog-action")

// runscDoFlags is the table of 'runsc do' ('runsc help do').
var runscDoFlags = goTable("force-overlay quiet", "cwd gid-map ip root uid-map")

func goTable(bools, values string) map[string]goFlag {
	t := map[string]goFlag{}
	for _, n := range strings.Fields(bools) {
		t[n] = goFlag{kind: Flag}
	}
	for _, n := range strings.Fields(values) {
		t[n] = goFlag{value: true, kind: Flag}
	}
	if _, ok := t["network"]; ok {
		t["network"] = goFlag{value: true, kind: Namespaces, ns: []string{"net"}}
		t["overlay2"] = goFlag{value: true, kind: ReadOnly}
	}
	if _, ok := t["force-overlay"]; ok {
		t["force-overlay"] = goFlag{kind: ReadOnly}
	}
	return t
}

// goFlags groups flags of Go's flag package (-x or --x alike) up to the
// first word that is not one, or "--".
func (p *parser) goFlags(table map[string]goFlag, what string) bool {
	for !p.done() {
		w := p.word()
		if w == "--" || !strings.HasPrefix(w, "-") || w == "-" {
			return true
		}
		name, _, eq := strings.Cut(strings.TrimLeft(w, "-"), "=")
		f, ok := table[name]
		switch {
		case !ok:
			p.rest(what + " -" + name + " is not in the arity table: its arguments cannot be told from the options after it")
			return false
		case f.value && !eq:
			if !p.take(1, f.kind, f.ns...) {
				return false
			}
		default:
			p.add(1, f.kind, f.ns...)
		}
	}
	return true
}

// runscDo reads runsc's subcommand: do and its flags, then "--" and the
// command; another subcommand has no table here.
func (p *parser) runscDo() {
	if p.done() || len(p.g.Ungrouped) > 0 {
		return
	}
	if p.word() != "do" {
		p.rest("runsc " + p.word() + ": only the subcommand do has an arity table")
		return
	}
	p.add(1, Subcommand)
	if p.goFlags(runscDoFlags, "the runsc do option") {
		p.endOfOptions()
	}
}

// podmanGlobal are podman's global options that take an argument (the
// others used before a subcommand take none: --remote, --syslog).
var podmanGlobal = map[string]option{
	"--root": opt(1), "--runroot": opt(1), "--runtime": opt(1), "--storage-driver": opt(1), "--storage-opt": opt(1),
	"--cgroup-manager": opt(1), "--log-level": opt(1), "--events-backend": opt(1), "--tmpdir": opt(1),
	"--network-backend": opt(1), "--network-cmd-path": opt(1), "--conmon": opt(1), "--url": opt(1),
	"--connection": opt(1), "--identity": opt(1), "--hooks-dir": opt(1), "--module": opt(1),
	"--runtime-flag": opt(1), "--ssh": opt(1), "--volumepath": opt(1), "--imagestore": opt(1),
	"--remote": opt(0), "--syslog": opt(0), "--noout": opt(0),
}

// podmanRunValues are the options of 'podman run' that take an argument
// (podman run --help of 4.3.1); podmanRunBools those that take none.
var podmanRunValues = strings.Fields(`add-host annotation arch attach authfile blkio-weight blkio-weight-device cap-add cap-drop
	cgroup-conf cgroup-parent cgroupns cgroups chrootdirs cidfile conmon-pidfile cpu-period cpu-quota cpu-rt-period
	cpu-rt-runtime cpu-shares cpus cpuset-cpus cpuset-mems detach-keys device device-cgroup-rule device-read-bps
	device-read-iops device-write-bps device-write-iops dns dns-option dns-search entrypoint env env-file env-merge expose
	gidmap group-add health-cmd health-interval health-on-failure health-retries health-start-period health-timeout hostname
	hostuser image-volume init-path ip ip6 ipc label label-file log-driver log-opt mac-address memory memory-reservation
	memory-swap memory-swappiness mount name network net network-alias oom-score-adj os passwd-entry personality pid pidfile
	pids-limit platform pod pod-id-file preserve-fds publish pull requires restart sdnotify seccomp-policy secret security-opt
	shm-size stop-signal stop-timeout subgidname subuidname sysctl systemd timeout tmpfs tz uidmap ulimit umask unsetenv
	user userns uts variant volume volumes-from workdir`)

var podmanRunBools = strings.Fields(`detach disable-content-trust env-host help http-proxy init interactive no-healthcheck
	no-hosts oom-kill-disable passwd privileged publish-all quiet read-only read-only-tmpfs replace rm rmi rootfs sig-proxy
	tls-verify tty unsetenv-all`)

// podmanShort maps podman run's short options to their long ones.
var podmanShort = map[byte]string{'a': "--attach", 'c': "--cpu-shares", 'd': "--detach", 'e': "--env", 'h': "--hostname",
	'i': "--interactive", 'l': "--label", 'm': "--memory", 'p': "--publish", 'P': "--publish-all", 'q': "--quiet",
	't': "--tty", 'u': "--user", 'v': "--volume", 'w': "--workdir"}

// podmanRun is podman run's table, with the kinds of the options the
// operators rewrite.
var podmanRun = func() map[string]option {
	t := map[string]option{}
	for _, n := range podmanRunValues {
		t["--"+n] = opt(1)
	}
	for _, n := range podmanRunBools {
		t["--"+n] = option{kind: Flag, optional: true} // pflag: --rm or --rm=false
	}
	for _, n := range []string{"network", "net", "ipc", "pid", "uts", "userns", "cgroupns"} {
		ns := n
		if n == "network" {
			ns = "net"
		}
		t["--"+n] = option{args: 1, kind: Namespaces, ns: []string{ns}}
	}
	t["--volume"] = option{args: 1, kind: ReadOnly}
	t["--mount"] = option{args: 1, kind: ReadOnly}
	return t
}()

// podman reads podman's global options, the subcommand run and its
// options, then the image (or root file system) and the command.
func (p *parser) podman() {
	for !p.done() && strings.HasPrefix(p.word(), "--") {
		if !p.getoptLong(podmanGlobal, "podman global") {
			return
		}
	}
	if p.done() {
		return
	}
	if p.word() != "run" {
		p.rest("podman " + p.word() + ": only the subcommand run has an arity table")
		return
	}
	p.add(1, Subcommand)
	for !p.done() {
		w := p.word()
		if w == "--" || !strings.HasPrefix(w, "-") || w == "-" {
			break
		}
		if !strings.HasPrefix(w, "--") {
			long, ok := podmanShort[w[1]]
			if !ok || len(w) > 2 {
				p.rest("podman run: " + w + " is not a short option of the table (write clusters and attached values in long form)")
				return
			}
			w = long
		}
		name, _, _ := strings.Cut(w, "=")
		if _, ok := podmanRun[name]; !ok {
			p.rest("podman run option " + name + " is not in the arity table: its arguments cannot be told from the options after it")
			return
		}
		if !p.getoptLong(podmanRunAs(p), "podman run") {
			return
		}
	}
	if !p.done() && p.word() == "--" {
		p.add(1, End)
	}
	if !p.done() {
		p.add(1, Image)
	}
	if !p.done() {
		p.add(len(p.words)-p.i, Command)
	}
}

// podmanRunAs is podman run's table keyed as the word at p is spelled
// (a short option by its letter).
func podmanRunAs(p *parser) map[string]option {
	w := p.word()
	if strings.HasPrefix(w, "--") {
		return podmanRun
	}
	return map[string]option{w: podmanRun[podmanShort[w[1]]]}
}
