package attacks

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

var plantInHomeSpec = &spec{
	id:        "plant_in_home",
	escapes:   "a file in the fake home changes on the host",
	firstStop: 5,
	new:       func() attack { return &plantInHome{} },
	elsewhere: elsewhere{harmlessAsRoot: true},
}

type plantInHome struct {
	before map[string]string // the fake home before the run
}

func (p *plantInHome) setup(e *env) (err error) {
	p.before, err = snapshot(e.fx.home)
	return err
}

func (*plantInHome) args(e *env) []string { return []string{e.fx.home} }

func (p *plantInHome) judge(e *env) verdict {
	after, err := snapshot(e.fx.home)
	if err != nil {
		return escaped("the fake home cannot be read any more: %v", err)
	}
	if diff := changes(p.before, after); len(diff) > 0 {
		return escaped("in the fake home: %s", strings.Join(diff, ", "))
	}
	return e.programLayer(e.iso.homeCovered, "hidden by mount namespace", "the fake home is unchanged on the host")
}

// snapshot maps every entry below dir (links not followed) to its type
// and content, so that any change on the host shows.
func snapshot(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = "file:" + string(b)
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link:" + target
		default:
			out[rel] = d.Type().String()
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	return out, nil
}

// changes lists what differs between two snapshots.
func changes(before, after map[string]string) []string {
	var out []string
	for name, b := range before {
		a, ok := after[name]
		switch {
		case !ok:
			out = append(out, name+" removed")
		case a != b:
			out = append(out, name+" changed")
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			out = append(out, name+" added")
		}
	}
	return out
}
