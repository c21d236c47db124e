package checks

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

var egressCredential = &Check{
	ID:      "egress_credential",
	Suite:   verdict.Hardening,
	Promise: "a credential the policy attaches to one destination arrives there, goes to no other destination, and is nowhere the program can read it",
	Level:   4,
	Untimed: true,
	Body: func(t *T) {
		// api is the credential's destination; echo is another allowed
		// destination, which answers with the headers it got, as an echo
		// service does.
		api := t.destination(0, false)
		echo := t.destination(0, true)
		secret := "sk-canary-" + token()
		apiDest, echoDest := hostPort("api.test", api), hostPort("echo.test", echo)
		p := egressPolicy(4, []string{apiDest, echoDest}, nil, map[string]string{"api.test": api.IP(), "echo.test": echo.IP()})
		p.Network.Credentials = []sandbox.Credential{{Destination: apiDest, Header: "X-Api-Key", Value: secret}}
		s := t.session(p, 0)
		// The program looks wherever a secret could be: its environment
		// and arguments, every process it can see, its files, and what
		// the other destination says it got.
		res := t.python(s, sandbox.Command{}, egressPy+`
import glob
print("api:", get("http://%s/with-key" % sys.argv[1]))
print("api tunnelled:", connect(sys.argv[1], "/tunnelled"))
print("echo:", urllib.request.urlopen("http://%s/" % sys.argv[2], timeout=5).read().decode().replace("\n", " | "))
print("env:", dict(os.environ))
print("argv:", sys.argv)
for f in glob.glob("/proc/[0-9]*/environ") + glob.glob("/proc/[0-9]*/cmdline"):
    try:
        print(f, open(f, "rb").read())
    except OSError as e:
        print(f, e.strerror)
for root in (os.getcwd(), os.environ.get("HOME", "/"), "/tmp"):
    for dirpath, _, files in os.walk(root):
        for name in files:
            try:
                print(os.path.join(dirpath, name), open(os.path.join(dirpath, name), "rb").read(4096))
            except OSError:
                pass
open("left.txt", "w").write(repr(dict(os.environ)))
`, apiDest, echoDest)
		_, _, reqs := api.Received()
		var withKey, tunnelled []string
		for _, r := range reqs {
			switch r.Path {
			case "/with-key":
				withKey = r.Header.Values("X-Api-Key")
			case "/tunnelled":
				tunnelled = r.Header.Values("X-Api-Key")
			}
		}
		t.Check(slices.Equal(withKey, []string{secret}), "the credential's destination got %q on the forwarded request", withKey)
		t.Check(len(tunnelled) == 0, "a tunnel carried a header the proxy cannot see into")
		t.Check(!echo.Contains(secret), "the credential went to another destination, %s", echo)
		inside := []string{"its output"}
		t.Check(!strings.Contains(res.Stdout+res.Stderr, secret), "the program read the credential: %.200s", res.Stdout)
		filepath.WalkDir(s.Dir(), func(path string, de fs.DirEntry, err error) error {
			if err == nil && de.Type().IsRegular() {
				b, _ := os.ReadFile(path)
				t.Check(!strings.Contains(string(b), secret), "the credential is in the session's file %s", path)
			}
			return nil
		})
		inside = append(inside, "its files")
		b, err := json.Marshal(res)
		t.NilError(err)
		t.Check(!strings.Contains(string(b), secret), "the Result holds the credential")
		var added []string
		for _, r := range res.Network {
			if r.Credential != "" {
				added = append(added, r.Method+" "+r.Destination())
			}
		}
		t.Check(slices.Equal(added, []string{"GET " + apiDest}), "logged as carrying the credential: %v", added)
		t.Evidence("%s got X-Api-Key on the forwarded request only; %s (another allowed destination) never got it; not in %s, nor in the Result, whose log names the header and not its value",
			api, echo, strings.Join(inside, " or "))
	},
}
