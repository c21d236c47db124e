package attacks

import (
	"os"
	"path/filepath"
)

func init() {
	register(attack{
		id:        "app_dir_overwrite",
		escapes:   "the application directory's fixture file changes",
		firstStop: 2,
		judge:     judgeAppDirOverwrite,
	})
}

func judgeAppDirOverwrite(t *trial) verdict {
	b, err := os.ReadFile(t.fx.appFile)
	switch {
	case err != nil:
		return escaped("the app's %s is gone: %v", appFileName, err)
	case string(b) != t.fx.appContent:
		return escaped("the app's %s changed (%d bytes now)", appFileName, len(b))
	}
	where := "the program wrote nowhere visible"
	if _, err := os.Lstat(filepath.Join(t.session.Dir(), appFileName)); err == nil {
		where = "the program's " + appFileName + " landed in the session directory"
	}
	return t.layer(t.iso.cwd != t.fx.appDir, "private working directory", "the app's %s is unchanged; %s", appFileName, where)
}
