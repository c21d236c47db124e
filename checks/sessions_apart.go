package checks

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"sandboxlab/sandbox"
	"sandboxlab/sandbox/evidence"
	"sandboxlab/sandbox/procfs"
	"sandboxlab/verdict"
)

var sessionsApart = &Check{
	ID:      "sessions_apart",
	Suite:   verdict.Hardening,
	Promise: "a session cannot list, read, hard-link or signal another session's files and processes",
	Level:   5,
	Untimed: true,
	Body: func(t *T) {
		// The victim's program lives on while the thief tries to reach it:
		// its wall clock is raised, and the cleanup kills it.
		victim := t.session(Preset(5, TimeLimits(20*time.Second)), 0)
		thief := t.session(Preset(5, notTimed), 0)
		secret := token()
		t.NilError(victim.WriteFile("notes.txt", []byte(secret)))
		vdir := victim.Dir() // before its run, which holds the session
		note := filepath.Join(vdir, "notes.txt")
		app := t.ownedDir("app")
		vtok := t.tagged()
		done := make(chan struct{})
		go func() {
			defer close(done)
			victim.Run(t.Context(), sandbox.Command{Path: evidence.Python, Args: []string{"-c", "import time\ntime.sleep(15)", vtok}, Dir: app})
		}()
		t.Cleanup(func() { procfs.KillWithArg(vtok, 5*time.Second); <-done })
		t.Assert(waitTagged(vtok), "the other session's program never started")
		// The thief gets the victim's tag reversed, so that its own
		// command line does not carry it.
		res := t.python(thief, sandbox.Command{}, `
import os, signal, sys
sdir, note, vtok = sys.argv[1], sys.argv[2], sys.argv[3][::-1]
def tried(what, f):
    try:
        print(what, "->", f())
    except OSError as e:
        print(what, "failed:", e.strerror)
tried("list", lambda: os.listdir(sdir))
tried("read", lambda: open(note).read())
tried("link", lambda: os.link(note, "stolen.txt"))
seen = 0
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        if vtok.encode() in open("/proc/%s/cmdline" % pid, "rb").read():
            seen += 1
            tried("signal " + pid, lambda: os.kill(int(pid), signal.SIGKILL))
    except OSError:
        pass
print("saw", seen, "of its processes")
`, vdir, note, reverse(vtok))
		out := strings.ReplaceAll(strings.TrimSpace(res.Stdout), "\n", "; ")
		t.Check(!strings.Contains(res.Stdout, secret), "the program read the other session's file: %s", out)
		t.Check(!strings.Contains(res.Stdout, "notes.txt"), "the program listed the other session: %s", out)
		_, err := os.Lstat(filepath.Join(thief.Dir(), "stolen.txt"))
		t.Check(os.IsNotExist(err), "the program hard-linked the other session's file: %s", out)
		t.Check(alive(vtok) > 0, "the other session's program was killed: %s", out)
		t.Evidence("the other session's files and program out of reach: %s", out)
	},
}

// waitTagged waits until a process tagged with tok is running.
func waitTagged(tok string) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if alive(tok) > 0 {
			return true
		}
	}
	return false
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}
