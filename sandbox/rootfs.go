package sandbox

import (
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"sandboxlab/mutants"
	"sandboxlab/sandbox/boot"
)

// The allowlist root (Filesystem.Expose, L6): the program's / is a fresh,
// read-only tmpfs that holds only what it needs to run, bound read-only
// from the host; the session directory and the private scratch
// directories are its only writable places. Nothing else of the host
// exists in it: no /var, /srv, /opt, /mnt, /home, /root or host /run, so
// a host service's socket or a user's file outside the session is not
// hidden from the program but absent, and Landlock's rules apply to the
// paths of this root. The init builds it in its own mount namespace and
// pivots into it; the old root is unmounted, not merely covered.

// DefaultExposed is the L6 preset's list of host paths in the program's
// root: the system's binaries and libraries (on a merged-/usr system
// /bin, /sbin and /lib* are symbolic links into /usr, and are made again
// as links), and the few files of /etc that programs read when they
// start or run: the dynamic loader's cache, the user and group names,
// the name-service switch (so that glibc reads only those files), the
// system's name and version, the time zone, locale aliases, the
// alternatives that /usr/bin/awk, cc and others go through, the CA
// certificates and OpenSSL's configuration (HTTPS through the egress
// proxy), MIME types, protocol and service names, and Python's
// site-wide configuration (Debian's sitecustomize.py is a link into
// /etc/python3.x). No resolver files: the program has no DNS, the egress
// proxy resolves names. Paths the host lacks are skipped.
func DefaultExposed() []string {
	return []string{
		"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
		"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
		"/etc/passwd", "/etc/group", "/etc/nsswitch.conf",
		"/etc/os-release", "/etc/debian_version", "/etc/localtime", "/etc/timezone", "/etc/locale.alias",
		"/etc/alternatives", "/etc/ssl/certs", "/etc/ssl/openssl.cnf",
		"/etc/mime.types", "/etc/protocols", "/etc/services",
		"/etc/python3*", // Python's version is in the directory's name
	}
}

// SessionMount is where an L6 program finds its session: its own root
// holds the session there, so that the session's path on the host (and
// with it the harness's temporary directory) shows in nothing the program
// can read: its working directory, HOME, TMPDIR or mount table.
const SessionMount = "/session"

// sessionAt is where the program under p finds the session directory
// dir: SessionMount in a root of its own with an identity of its own
// (L6), else dir itself.
func sessionAt(p Policy, dir string) string {
	if !ownRoot(p) || !p.Hardened.OwnIdentity || mutants.On(mutants.SessionHostPath) {
		// The defect: the session is bound where the host keeps it, as a
		// sandbox does that binds the working directory at its own path.
		return dir
	}
	return SessionMount
}

// inside is path, a host path, as the program under p with the session
// directory dir sees it.
func inside(p Policy, dir, path string) string {
	at := sessionAt(p, dir)
	if at == dir {
		return path
	}
	return boot.InsideSession(path, dir, at)
}

// ownRoot reports whether the init builds p's allowlist root.
func ownRoot(p Policy) bool {
	return len(p.Filesystem.Expose) > 0 && !mutants.On(mutants.NoAllowlistRoot)
}

// addRoot gives the init the allowlist root p asks for, and takes the
// hidden and private directories and the session over from the L5
// steps, which would otherwise cover them in the old root for nothing.
func (l *launch) addRoot(p Policy, c Command, dir string) {
	if !ownRoot(p) {
		return
	}
	expose := p.Filesystem.Expose
	if mutants.On(mutants.RootExposesVar) {
		// The defect: /var comes too, read-only, as a sandbox adds it for a
		// program that reads /var/lib: a read-only mount does not stop a
		// connect to a socket there.
		expose = append(slices.Clone(expose), "/var")
	}
	l.cfg.Root = &rootSpec{Expose: expandPaths(expose), Private: cleanPaths(l.cfg.Private),
		Session: dir, Program: c.Path, Hide: cleanPaths(l.cfg.Hide)}
	if at := sessionAt(p, dir); at != dir {
		l.cfg.Root.SessionAt = at
	}
	l.cfg.Private, l.cfg.Hide, l.cfg.Session = nil, nil, ""
	l.attr.Cloneflags |= unix.CLONE_NEWNS
	l.cfg.PrivateMounts = true
}

// cleanPaths returns paths in their clean form: each is joined to the
// new root's staging directory, where a ".." must not lead out.
func cleanPaths(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Clean(p)
	}
	return out
}

// expandPaths returns paths clean, each pattern (filepath.Match: "*",
// "?", "[...]") replaced by the host's paths it matches, now.
func expandPaths(paths []string) []string {
	var out []string
	for _, p := range paths {
		p = filepath.Clean(p)
		if !strings.ContainsAny(p, "*?[") {
			out = append(out, p)
			continue
		}
		matches, _ := filepath.Glob(p) // a bad pattern is refused by Validate
		out = append(out, matches...)
	}
	return out
}
