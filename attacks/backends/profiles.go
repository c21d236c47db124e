package backends

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// The placeholders a command may hold, replaced for each run.
const (
	// Workdir is the run's own working directory, made fresh for it and
	// writable by the program (the session directory of sandboxlab's own
	// runs).
	Workdir = "{workdir}"
	// Python is the interpreter's absolute path.
	Python = "{python}"
	// Home is the home directory of the user the agent works for: here the
	// harness's fake home, with the fake SSH key in it.
	Home = "{home}"
)

// The placeholders of a driver's per-run set-up (see Driver): each made
// for one run and removed after it.
const (
	// Rootfs is a container's root directory: empty mount points and
	// Debian's links into /usr, no file of the host's (podman).
	Rootfs = "{rootfs}"
	// State is a directory for the runtime's state and storage (podman's
	// --root, --runroot and --tmpdir; runc's --root).
	State = "{state}"
	// Name is the container's name, unique to the run.
	Name = "{name}"
	// Nofile is the harness's own hard limit of open files: podman's
	// default (1,048,576) fails where root lacks CAP_SYS_RESOURCE.
	Nofile = "{nofile}"
	// Bundle is the OCI bundle the harness writes (runc): config.json
	// and the root directory.
	Bundle = "{bundle}"
	// Kernel and Initrd are the guest's kernel and the initrd the harness
	// built for it (qemu); Accel and CPU are the accelerator and CPU
	// model the column uses (kvm and host, or tcg and max); Job is the
	// run's job directory, shared with the guest.
	Kernel = "{kernel}"
	Initrd = "{initrd}"
	Accel  = "{accel}"
	CPU    = "{cpu}"
	Job    = "{job}"
)

// Driver is how the harness runs a profile's command.
type Driver string

const (
	// DriverPrefix (the default): the command is a prefix, the program's
	// command follows it.
	DriverPrefix Driver = ""
	// DriverPodman: a prefix too (podman run ... --rootfs {rootfs}), with
	// a root directory, a state directory and a name made for each run,
	// and the container removed after it.
	DriverPodman Driver = "podman"
	// DriverRunc: the command runs a bundle (runc run --bundle {bundle}
	// {name}) whose config.json the harness generates for each run from
	// the runtime's own template (runc spec), with the program in it.
	DriverRunc Driver = "runc"
	// DriverQEMU: the command boots a virtual machine whose init runs the
	// program from the job directory ({job}); see package guest.
	DriverQEMU Driver = "qemu"
)

// driverPlaceholders lists the placeholders each driver fills in beyond
// the common ones.
var driverPlaceholders = map[Driver][]string{
	DriverPrefix: nil,
	DriverPodman: {Rootfs, State, Name, Nofile},
	DriverRunc:   {State, Bundle, Name},
	DriverQEMU:   {Kernel, Initrd, Accel, CPU, Job},
}

// placeholders lists every placeholder d knows, for messages.
func (d Driver) placeholders() []string {
	return append([]string{Home, Python, Workdir}, driverPlaceholders[d]...)
}

// placeholderRE finds what looks like a placeholder, known or not.
var placeholderRE = regexp.MustCompile(`\{[A-Za-z_][A-Za-z0-9_]*\}`)

// User is the host identity a backend is started as.
type User string

const (
	// UserProgram is the identity sandboxlab runs every program as: the
	// harness's own, or 65534 when the harness is host root. The default.
	UserProgram User = "program"
	// UserHarness is the harness's own identity, host root when it runs as
	// root: for a backend that refuses the unprivileged one (firejail
	// refuses the user nobody). A program that then has host root
	// privileges gets only the attacks harmless by construction.
	UserHarness User = "harness"
	// UserThrowaway is a user the harness makes for the column and
	// removes after it (podman-rootless), or the one SANDBOXLAB_ROOTLESS_USER
	// names; when the harness is not root, its own.
	UserThrowaway User = "throwaway"
)

// DefaultWatchdog bounds every run of a backend whose profile names no
// watchdog: a little under the 10 s the runaway loop bounds itself at, so
// that a loop nothing stops is seen still running when the harness stops
// it, and well over what any other attack needs under the slowest backend
// here.
const DefaultWatchdog = 8 * time.Second

// MaxWatchdog is the longest watchdog a profile may ask for.
const MaxWatchdog = time.Minute

// Profile is one way to run a program under another sandbox: a command
// prefix the program's own command follows.
type Profile struct {
	// Name is what --sandbox calls it.
	Name string `yaml:"name" json:"name"`
	// About says in a line what the profile is and where its flags come
	// from.
	About string `yaml:"about" json:"about"`
	// Command is the prefix: the backend's executable (looked up in PATH
	// unless absolute) and its arguments, with placeholders. The program's
	// command ({python} -c SOURCE TOKEN ARGS...) is appended to it.
	Command []string `yaml:"command" json:"command"`
	// User is the identity the backend starts as (default UserProgram).
	User User `yaml:"user,omitempty" json:"user,omitempty"`
	// Watchdog bounds each run (default DefaultWatchdog).
	Watchdog time.Duration `yaml:"watchdog,omitempty" json:"watchdog,omitempty"`
	// Driver is how the command runs (default DriverPrefix).
	Driver Driver `yaml:"driver,omitempty" json:"driver,omitempty"`
}

// Starter returns the identity the backend starts as.
func (p *Profile) Starter() User {
	if p.User == "" {
		return UserProgram
	}
	return p.User
}

// Limit returns the harness's watchdog for each run.
func (p *Profile) Limit() time.Duration {
	if p.Watchdog == 0 {
		return DefaultWatchdog
	}
	return p.Watchdog
}

// Vars are what the placeholders stand for in one run: the common ones,
// and those of the profile's driver.
type Vars struct {
	Workdir, Python, Home               string
	Rootfs, State, Name, Nofile, Bundle string
	Kernel, Initrd, Accel, CPU, Job     string
}

// Expand returns the command with its placeholders replaced.
func (p *Profile) Expand(v Vars) []string {
	r := strings.NewReplacer(Workdir, v.Workdir, Python, v.Python, Home, v.Home,
		Rootfs, v.Rootfs, State, v.State, Name, v.Name, Nofile, v.Nofile, Bundle, v.Bundle,
		Kernel, v.Kernel, Initrd, v.Initrd, Accel, v.Accel, CPU, v.CPU, Job, v.Job)
	out := make([]string, len(p.Command))
	for i, a := range p.Command {
		out[i] = r.Replace(a)
	}
	return out
}

// validate checks a profile read from a file or the command line.
func (p *Profile) validate() error {
	switch {
	case !nameRE.MatchString(p.Name):
		return fmt.Errorf("profile name %q: want lower-case letters, digits, '.', '_' and '-', starting with a letter or digit", p.Name)
	case len(p.Command) == 0 || p.Command[0] == "":
		return fmt.Errorf("profile %s: no command", p.Name)
	case p.User != "" && p.User != UserProgram && p.User != UserHarness && p.User != UserThrowaway:
		return fmt.Errorf("profile %s: user %q: want %s, %s or %s", p.Name, p.User, UserProgram, UserHarness, UserThrowaway)
	case p.Watchdog < 0 || p.Watchdog > MaxWatchdog:
		return fmt.Errorf("profile %s: watchdog %v: want 0 (the default, %v) up to %v", p.Name, p.Watchdog, DefaultWatchdog, MaxWatchdog)
	}
	if _, ok := driverPlaceholders[p.Driver]; !ok {
		return fmt.Errorf("profile %s: driver %q: want none, %s, %s or %s", p.Name, p.Driver, DriverPodman, DriverRunc, DriverQEMU)
	}
	known := p.Driver.placeholders()
	for _, a := range p.Command {
		for _, ph := range placeholderRE.FindAllString(a, -1) {
			if !slices.Contains(known, ph) {
				return fmt.Errorf("profile %s: unknown placeholder %s in %q (known: %s)", p.Name, ph, a, strings.Join(known, ", "))
			}
		}
	}
	return nil
}

// nameRE is what a profile's name may be; it cannot begin like the other
// kinds of --sandbox name (sandboxlab:, custom:).
var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

//go:embed profiles.yaml
var shippedYAML []byte

// Shipped returns the profiles that come with sandboxlab (profiles.yaml).
func Shipped() []Profile {
	ps, err := Decode(bytes.NewReader(shippedYAML), "profiles.yaml")
	if err != nil {
		panic("backends: the shipped profiles.yaml is invalid: " + err.Error())
	}
	return ps
}

// fileVersion is the version of the profiles file this package reads.
const fileVersion = 1

// profilesFile is the YAML file: a version and a list of profiles.
type profilesFile struct {
	Version  int       `yaml:"version"`
	Profiles []Profile `yaml:"profiles"`
}

// Load reads a user's profiles file.
func Load(path string) ([]Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading profiles: %w", err)
	}
	defer f.Close()
	return Decode(f, path)
}

// Decode reads a profiles file strictly: an unknown field, a duplicate
// name, an unknown placeholder or a bad value is an error that names the
// file and the line.
func Decode(r io.Reader, name string) ([]Profile, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f profilesFile
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty (want version: %d and a list of profiles)", name, fileVersion)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if f.Version != fileVersion {
		return nil, fmt.Errorf("%s: version %d: want %d", name, f.Version, fileVersion)
	}
	lines := profileLines(data)
	seen := map[string]bool{}
	for i := range f.Profiles {
		p := &f.Profiles[i]
		at := name
		if i < len(lines) {
			at += ": line " + strconv.Itoa(lines[i])
		}
		if err := p.validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("%s: profile %s is defined twice", at, p.Name)
		}
		seen[p.Name] = true
	}
	return f.Profiles, nil
}

// profileLines returns the line of each entry of the profiles list, for
// messages about an entry's values (the strict decoding has read the
// file already; this only finds where each entry begins).
func profileLines(data []byte) []int {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "profiles" {
			var lines []int
			for _, n := range top.Content[i+1].Content {
				lines = append(lines, n.Line)
			}
			return lines
		}
	}
	return nil
}

// Merge returns the shipped profiles with the user's added: a user's
// profile with a shipped one's name takes its place.
func Merge(shipped, user []Profile) []Profile {
	out := slices.Clone(shipped)
	for _, u := range user {
		if i := slices.IndexFunc(out, func(p Profile) bool { return p.Name == u.Name }); i >= 0 {
			out[i] = u
		} else {
			out = append(out, u)
		}
	}
	return out
}

// The kinds of --sandbox name.
const (
	// LevelPrefix names one of sandboxlab's own levels: sandboxlab:L5.
	LevelPrefix = "sandboxlab:L"
	// CustomPrefix gives a command prefix on the command line:
	// custom:bwrap --unshare-all ... --.
	CustomPrefix = "custom:"
)

// CustomName is the profile name of a custom prefix.
const CustomName = "custom"

// Sandbox is one column of the attack × sandbox matrix: one of sandboxlab's
// levels, or a backend.
type Sandbox struct {
	// Spec is the name as given on the command line.
	Spec string
	// Level is sandboxlab's level for a sandboxlab:L<n> column, -1 for a
	// backend.
	Level int
	// Profile is the backend (nil for sandboxlab's levels).
	Profile *Profile
}

// Name is the column's short name: sandboxlab:L<n>, the profile's name,
// or custom for a prefix given on the command line.
func (s Sandbox) Name() string {
	if s.Profile == nil {
		return LevelPrefix + strconv.Itoa(s.Level)
	}
	return s.Profile.Name
}

// ErrUnknown wraps the error for a --sandbox name that names nothing.
var ErrUnknown = errors.New("unknown sandbox")

// Resolve turns a --sandbox name into a Sandbox: sandboxlab:L<n> for n
// below levels, custom:<prefix>, or a profile's name.
func Resolve(spec string, profiles []Profile, levels int) (Sandbox, error) {
	switch {
	case strings.HasPrefix(spec, LevelPrefix):
		n, err := strconv.Atoi(strings.TrimPrefix(spec, LevelPrefix))
		if err != nil || n < 0 || n >= levels {
			return Sandbox{}, fmt.Errorf("%w %q: want %s0 to %s%d", ErrUnknown, spec, LevelPrefix, LevelPrefix, levels-1)
		}
		return Sandbox{Spec: spec, Level: n}, nil
	case strings.HasPrefix(spec, CustomPrefix):
		words, err := SplitWords(strings.TrimPrefix(spec, CustomPrefix))
		if err != nil {
			return Sandbox{}, fmt.Errorf("%s: %w", spec, err)
		}
		p := &Profile{Name: CustomName, About: "a command prefix given on the command line", Command: words}
		if err := p.validate(); err != nil {
			return Sandbox{}, fmt.Errorf("%s: %w", spec, err)
		}
		return Sandbox{Spec: spec, Level: -1, Profile: p}, nil
	}
	for i := range profiles {
		if profiles[i].Name == spec {
			p := profiles[i]
			return Sandbox{Spec: spec, Level: -1, Profile: &p}, nil
		}
	}
	names := make([]string, len(profiles))
	for i, p := range profiles {
		names[i] = p.Name
	}
	return Sandbox{}, fmt.Errorf("%w %q (want %s<n>, %s<prefix> or a profile: %s)", ErrUnknown, spec, LevelPrefix, CustomPrefix, strings.Join(names, ", "))
}
