package backends

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestShippedProfiles: the shipped file decodes strictly, and every
// profile says what it is and places the program's working directory
// (runc's in the spec the harness writes).
func TestShippedProfiles(t *testing.T) {
	ps := Shipped()
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
		assert.Check(t, p.About != "", p.Name)
		assert.Check(t, p.Limit() > 0 && p.Limit() <= MaxWatchdog, p.Name)
		cmd := strings.Join(p.Command, " ")
		if p.Driver != DriverRunc {
			assert.Check(t, strings.Contains(cmd, Workdir), "%s: the program's working directory is not placed: %s", p.Name, cmd)
		}
	}
	assert.DeepEqual(t, names, []string{"bubblewrap", "bubblewrap-codex", "firejail", "gvisor", "unshare", "podman", "podman-rootless", "runc", "qemu"})
	// firejail refuses the user nobody; rootful podman and runc need root
	// (their programs run as 65534 inside); rootless podman runs as a
	// user of its own.
	starters := map[string]User{"firejail": UserHarness, "podman": UserHarness, "runc": UserHarness, "podman-rootless": UserThrowaway}
	for _, p := range ps {
		want, ok := starters[p.Name]
		if !ok {
			want = UserProgram
		}
		assert.Check(t, is.Equal(p.Starter(), want), p.Name)
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"empty", "", "t.yaml: empty"},
		{"version", "version: 2\nprofiles: []\n", "t.yaml: version 2: want 1"},
		{"unknown field", "version: 1\nprofiles:\n  - name: a\n    command: [x]\n    flags: [y]\n", "line 5: field flags not found"},
		{"duplicate", "version: 1\nprofiles:\n  - name: a\n    command: [x]\n  - name: a\n    command: [y]\n", "t.yaml: line 5: profile a is defined twice"},
		{"placeholder", "version: 1\nprofiles:\n  - name: a\n    command: [x, \"{tmpdir}\"]\n", "t.yaml: line 3: profile a: unknown placeholder {tmpdir} in \"{tmpdir}\" (known: {home}, {python}, {workdir})"},
		{"no command", "version: 1\nprofiles:\n  - name: a\n", "line 3: profile a: no command"},
		{"user", "version: 1\nprofiles:\n  - name: a\n    command: [x]\n    user: root\n", `profile a: user "root": want program, harness or throwaway`},
		{"driver", "version: 1\nprofiles:\n  - name: a\n    command: [x]\n    driver: docker\n", `profile a: driver "docker": want none, podman, runc or qemu`},
		{"driver's placeholder", "version: 1\nprofiles:\n  - name: a\n    command: [x, \"{rootfs}\"]\n", "unknown placeholder {rootfs}"},
		{"another driver's placeholder", "version: 1\nprofiles:\n  - name: a\n    driver: runc\n    command: [x, \"{job}\"]\n", "unknown placeholder {job} in \"{job}\" (known: {home}, {python}, {workdir}, {state}, {bundle}, {name})"},
		{"watchdog", "version: 1\nprofiles:\n  - name: a\n    command: [x]\n    watchdog: 2m\n", "profile a: watchdog 2m0s"},
		{"name", "version: 1\nprofiles:\n  - name: \"custom:x\"\n    command: [x]\n", `profile name "custom:x"`},
		{"type", "version: 1\nprofiles:\n  - name: a\n    command: x\n", "line 4: cannot unmarshal"},
	} {
		_, err := Decode(strings.NewReader(tc.yaml), "t.yaml")
		assert.Check(t, is.ErrorContains(err, tc.want), tc.name)
	}
}

// TestUserFileExtends: a user's file adds profiles and replaces a
// shipped one of the same name.
func TestUserFileExtends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mine.yaml")
	assert.NilError(t, os.WriteFile(path, []byte(`version: 1
profiles:
  - name: bubblewrap
    about: my own bubblewrap
    command: [bwrap, --unshare-all, --chdir, "{workdir}", --]
  - name: nsjail
    about: nsjail as I run it
    command: [nsjail, -Mo, --cwd, "{workdir}", --]
    watchdog: 3s
`), 0o644))
	user, err := Load(path)
	assert.NilError(t, err)
	all := Merge(Shipped(), user)
	assert.Check(t, is.Len(all, len(Shipped())+1))
	sb, err := Resolve("bubblewrap", all, 7)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(sb.Profile.About, "my own bubblewrap"))
	sb, err = Resolve("nsjail", all, 7)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(sb.Profile.Limit(), 3*time.Second))

	_, err = Load(filepath.Join(t.TempDir(), "missing.yaml"))
	assert.Check(t, errors.Is(err, os.ErrNotExist))
}

func TestResolve(t *testing.T) {
	ps := Shipped()
	sb, err := Resolve("sandboxlab:L5", ps, 7)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(sb.Level, 5))
	assert.Check(t, sb.Profile == nil)
	assert.Check(t, is.Equal(sb.Name(), "sandboxlab:L5"))

	sb, err = Resolve("gvisor", ps, 7)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(sb.Level, -1))
	assert.Check(t, is.Equal(sb.Name(), "gvisor"))

	sb, err = Resolve(`custom:bwrap --unshare-all --bind "{workdir}" {workdir} --`, ps, 7)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(sb.Name(), CustomName))
	assert.DeepEqual(t, sb.Profile.Command, []string{"bwrap", "--unshare-all", "--bind", "{workdir}", "{workdir}", "--"})
	assert.Check(t, is.Equal(sb.Profile.Starter(), UserProgram), "a custom prefix starts as the program's identity")

	for _, bad := range []struct{ spec, want string }{
		{"sandboxlab:L7", "want sandboxlab:L0 to sandboxlab:L6"},
		{"sandboxlab:Lx", "unknown sandbox"},
		{"docker", `unknown sandbox "docker" (want sandboxlab:L<n>, custom:<prefix> or a profile: bubblewrap, bubblewrap-codex, firejail, gvisor, unshare, podman, podman-rootless, runc, qemu)`},
		{"custom:", "no command"},
		{"custom:bwrap '--", "unterminated single quote"},
		{"custom:bwrap {cwd}", "unknown placeholder {cwd}"},
	} {
		_, err := Resolve(bad.spec, ps, 7)
		assert.Check(t, is.ErrorContains(err, bad.want), bad.spec)
	}
}

func TestExpand(t *testing.T) {
	p := Profile{Command: []string{"x", "--bind", "{workdir}", "{workdir}", "--blacklist={home}/.ssh", "{python}"}}
	got := p.Expand(Vars{Workdir: "/w", Python: "/usr/bin/python3", Home: "/h"})
	assert.DeepEqual(t, got, []string{"x", "--bind", "/w", "/w", "--blacklist=/h/.ssh", "/usr/bin/python3"})
	assert.Check(t, is.Equal(p.Command[2], "{workdir}"), "Expand leaves the profile as it was")

	q := Profile{Driver: DriverQEMU, Command: []string{"q", "-accel", "{accel}", "local,path={job}", "-kernel", "{kernel}"}}
	got = q.Expand(Vars{Accel: "tcg", Job: "/j", Kernel: "/k"})
	assert.DeepEqual(t, got, []string{"q", "-accel", "tcg", "local,path=/j", "-kernel", "/k"})
}

func TestSplitWords(t *testing.T) {
	for in, want := range map[string][]string{
		"bwrap --ro-bind / / --":        {"bwrap", "--ro-bind", "/", "/", "--"},
		"  a\t b\n":                     {"a", "b"},
		`a 'b c' "d e"`:                 {"a", "b c", "d e"},
		`a 'it''s' x`:                   {"a", "its", "x"},
		`"a \"q\" \$HOME \n"`:           {`a "q" $HOME \n`},
		`a\ b c`:                        {"a b", "c"},
		`--setenv PATH '/usr/bin:/bin'`: {"--setenv", "PATH", "/usr/bin:/bin"},
		`$HOME ~ *`:                     {"$HOME", "~", "*"},
		`''`:                            {""},
		"":                              nil,
	} {
		got, err := SplitWords(in)
		assert.NilError(t, err, in)
		assert.DeepEqual(t, got, want)
	}
	for _, bad := range []string{`'a`, `"a`, `a\`} {
		_, err := SplitWords(bad)
		assert.Check(t, err != nil, bad)
	}
}
