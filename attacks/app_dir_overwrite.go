package attacks

import (
	"os"
	"path/filepath"
)

var appDirOverwriteSpec = &spec{
	id:        "app_dir_overwrite",
	escapes:   "the application directory's fixture file changes",
	firstStop: 2,
	new:       func() attack { return appDirOverwrite{} },
	elsewhere: elsewhere{rootRisk: "it overwrites config.py in its working directory, wherever the sandbox puts it"},
}

type appDirOverwrite struct{}

func (appDirOverwrite) judge(e *env) verdict {
	b, err := os.ReadFile(e.fx.appFile)
	switch {
	case err != nil:
		return escaped("the app's %s is gone: %v", appFileName, err)
	case string(b) != e.fx.appContent:
		return escaped("the app's %s changed (%d bytes now)", appFileName, len(b))
	}
	where := "the program wrote nowhere visible"
	if _, err := os.Lstat(filepath.Join(e.session.Dir(), appFileName)); err == nil {
		where = "the program's " + appFileName + " landed in the session directory"
	}
	return e.layer(e.iso.cwd != e.fx.appDir, "private working directory", "the app's %s is unchanged; %s", appFileName, where)
}
