package attacks

import (
	"os"
	"path/filepath"
	"strings"

	"sandboxlab/sandbox"
)

var readOtherSessionSpec = &spec{
	id:        "read_other_session",
	escapes:   "reads or hard-links a file of another live session beside its own",
	firstStop: 5,
	new:       func() attack { return &readOtherSession{} },
	elsewhere: elsewhere{rootRisk: "it hard-links what it finds into its working directory, wherever the sandbox puts it"},
}

// readOtherSession's victim is a second session of the same policy in the
// same directory, as another conversation on the same host would be, with
// a secret in it.
type readOtherSession struct {
	victim *sandbox.Session
	secret string
	file   string
}

func (r *readOtherSession) setup(e *env) error {
	v, err := e.newSession(e.policy)
	if err != nil {
		return err
	}
	r.victim = v
	e.onCleanup(func() { v.Close() })
	r.secret = "session secret " + randomHex(16)
	r.file = filepath.Join(v.Dir(), "notes.txt")
	return v.WriteFile("notes.txt", []byte(r.secret))
}

func (r *readOtherSession) args(e *env) []string { return []string{e.fx.sessions} }

func (r *readOtherSession) judge(e *env) verdict {
	if strings.Contains(e.output(), r.secret) {
		return escaped("the output holds the other session's notes.txt")
	}
	if link := linkTo(r.file, e.session.Dir(), e.fx.appDir); link != "" {
		return escaped("%s is a hard link to the other session's notes.txt", link)
	}
	seen := "the other session's file neither read nor linked; " + lastLine(e.res.Stdout)
	return e.programLayer(e.iso.sessionsCovered, "other sessions out of sight", "%s", seen)
}

// linkTo returns a file in dirs that is the same file as target (a hard
// link), or "".
func linkTo(target string, dirs ...string) string {
	want, err := os.Stat(target)
	if err != nil {
		return ""
	}
	for _, dir := range dirs {
		entries, _ := os.ReadDir(dir)
		for _, en := range entries {
			p := filepath.Join(dir, en.Name())
			if st, err := os.Lstat(p); err == nil && os.SameFile(st, want) {
				return p
			}
		}
	}
	return ""
}
