package attacks

import (
	"errors"
	"io/fs"

	"sandboxlab/sandbox"
)

var fileAPISymlinkSpec = &spec{
	id:        "file_api_symlink",
	escapes:   "the host's file API hands back a host file through a link the program made",
	firstStop: 0,
	new:       func() attack { return fileAPISymlink{} },
	elsewhere: elsewhere{na: "it needs sandboxlab's host-side file API, which hands a run's files back to the model; other sandboxes have none"},
}

// linkName is the output file the program leaves as a link.
const linkName = "report.txt"

type fileAPISymlink struct{}

func (fileAPISymlink) args(e *env) []string {
	return []string{e.session.Dir(), e.fx.hostSecret}
}

func (fileAPISymlink) judge(e *env) verdict {
	// What the tool does when it returns an output file to the model.
	data, err := e.session.ReadFile(linkName)
	switch {
	case err == nil && string(data) == e.fx.hostSecretData:
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
		return stopped("unexpected: no "+linkName+" in the session directory", "%v (%s)", err, ended(e.res))
	}
	return stopped("unexpected: "+err.Error(), "%v", err)
}
