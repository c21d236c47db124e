//go:build nomutants

package mutants

import "os"

// Compiled reports whether planted sites exist in this build.
const Compiled = false

// Enable refuses every defect: this build has none. Enable("") succeeds so
// callers need no special case for "no defect".
func Enable(id string) error {
	if id == "" {
		return nil
	}
	if _, err := Lookup(id); err != nil {
		return err
	}
	return ErrNotCompiled
}

// Active always returns "".
func Active() ID { return "" }

// On is always false; the compiler removes the sites that call it.
func On(ID) bool { return false }

// Cover refuses: this build has no sites to reach.
func Cover(int) error { return ErrNotCompiled }

// Covering is always false.
func Covering() bool { return false }

// ChildFile is always nil.
func ChildFile() *os.File { return nil }

// Reached is always empty.
func Reached() ([]ID, error) { return nil, nil }
