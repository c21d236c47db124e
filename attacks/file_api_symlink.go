package attacks

import (
	"errors"
	"io/fs"

	"sandboxlab/sandbox"
)

func init() {
	register(attack{
		id:        "file_api_symlink",
		escapes:   "the host's file API hands back a host file through a link the program made",
		firstStop: 0,
		args: func(t *trial) []string {
			return []string{t.session.Dir(), t.fx.hostSecret}
		},
		judge: judgeFileAPISymlink,
	})
}

// linkName is the output file the program leaves as a link.
const linkName = "report.txt"

func judgeFileAPISymlink(t *trial) verdict {
	// What the tool does when it returns an output file to the model.
	data, err := t.session.ReadFile(linkName)
	switch {
	case err == nil && string(data) == t.fx.hostSecretData:
		return escaped("the file API returned the host secret through %s", linkName)
	case err == nil:
		return stopped("unexpected: other content", "the file API returned %d bytes that are not the secret", len(data))
	case errors.Is(err, sandbox.ErrLink):
		return stopped("file API: link refused", "%v", err)
	case errors.Is(err, sandbox.ErrName):
		return stopped("file API: name refused", "%v", err)
	case errors.Is(err, sandbox.ErrNotRegular):
		return stopped("file API: not a regular file", "%v", err)
	case errors.Is(err, fs.ErrNotExist):
		return stopped("unexpected: no "+linkName+" in the session directory", "%v (%s)", err, ended(t.res))
	}
	return stopped("unexpected: "+err.Error(), "%v", err)
}
