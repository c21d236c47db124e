package harness

import (
	"fmt"
	"strings"

	"sandboxlab/attacks/backends"
	"sandboxlab/attacks/backends/argv"
	"sandboxlab/report"
)

// ProfileFile is a profiles file: its path as reports name it (relative
// to the repository where it can be) and its bytes.
type ProfileFile struct {
	Path string
	Data []byte
}

// CustomFile is the file name reports give a custom prefix, which lives
// on the command line, not in a file of the repository.
const CustomFile = "custom-prefix.sh"

// LocateSandbox returns where sb's profile is written: in the last of
// files that defines its name (a user's file after the shipped one, as
// backends.Merge lets a user's profile replace a shipped one), with the
// groups that file spells in its groups document; a custom prefix is its
// own one-line file. A sandboxlab level has no source (nil, nil).
func LocateSandbox(sb backends.Sandbox, files []ProfileFile) (*report.ProfileSource, *argv.Located, map[string][]argv.GroupSpec, error) {
	if sb.Profile == nil {
		return nil, nil, nil, nil
	}
	if prefix, ok := strings.CutPrefix(sb.Spec, backends.CustomPrefix); ok {
		words := argv.LocateWords(prefix)
		l := &argv.Located{Entry: 1, Words: words}
		if len(words) > 0 {
			l.Command = argv.Join(words[0], words[len(words)-1])
		}
		return &report.ProfileSource{File: CustomFile, Language: "shell", Text: prefix + "\n", Entry: 1, Command: spanOf(l.Command)}, l, nil, nil
	}
	for i := len(files) - 1; i >= 0; i-- {
		l, err := argv.LocateProfile(files[i].Data, sb.Profile.Name)
		if err != nil {
			continue
		}
		specs, err := argv.DecodeGroups(files[i].Data)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", files[i].Path, err)
		}
		src := &report.ProfileSource{File: files[i].Path, Language: "yaml", Text: string(files[i].Data), Entry: l.Entry, Command: spanOf(l.Command)}
		return src, l, specs, nil
	}
	return nil, nil, nil, fmt.Errorf("profile %s is in none of the profiles files", sb.Profile.Name)
}

// GroupProfile reads a profile's command: with the groups its file
// spells for it, or else its tool's arity table.
func GroupProfile(p *backends.Profile, specs map[string][]argv.GroupSpec) (*argv.Grouping, error) {
	if s, ok := specs[p.Name]; ok {
		g, err := argv.Explicit(p.Command, s)
		if err != nil {
			return nil, fmt.Errorf("profile %s: its groups: %w", p.Name, err)
		}
		return g, nil
	}
	return argv.Split(p.Command)
}
