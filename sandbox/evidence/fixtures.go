package evidence

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// FixturesEnv names a directory the fixtures go below instead of the
// default; the mutation harness gives each of its workers its own.
const FixturesEnv = "SANDBOXLAB_FIXTURES"

// FixtureRoot returns the directory below which checks and attacks make
// their fixtures: fakes of what a user's machine holds (a home with a
// key, an application's directory, a host secret). It lies outside the
// scratch directories that L5 makes private, as a user's files do, so
// that at L5 only the layer under test hides them from the program:
// $SANDBOXLAB_FIXTURES when set, else /var/lib/sandboxlab for root, else
// the user's cache directory. It is made if missing (mode 0711: the
// program's identity may pass through, not list).
func FixtureRoot() (string, error) {
	var candidates []string
	if dir := os.Getenv(FixturesEnv); dir != "" {
		candidates = []string{dir}
	} else {
		if os.Geteuid() == 0 {
			candidates = append(candidates, "/var/lib/sandboxlab")
		}
		if cache, err := os.UserCacheDir(); err == nil {
			candidates = append(candidates, filepath.Join(cache, "sandboxlab"))
		}
	}
	var errs []error
	for _, dir := range candidates {
		err := os.MkdirAll(dir, 0o711)
		if err == nil {
			return dir, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return "", errors.New("fixture directory: no candidate (set " + FixturesEnv + ")")
	}
	return "", fmt.Errorf("fixture directory: %w", errors.Join(errs...))
}
