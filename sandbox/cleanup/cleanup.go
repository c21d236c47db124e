// Package cleanup is a stack of undo steps, in the spirit of gVisor's
// pkg/cleanup: a set-up that takes several steps adds the undoing of each
// step as it succeeds, defers Clean, and calls Release once the whole has
// succeeded and has an owner that will undo it later. A check's Cleanup
// and an attack cell's undo steps are the same stack used without
// Release: everything added is undone at the end, last added first.
//
// It imports the standard library only, so that the sandbox library and
// the runners above it can share it.
package cleanup

import (
	"errors"
	"sync"
)

// Stack holds the steps to undo. Its zero value is an empty stack ready to
// use; it may be used from several goroutines. A step may add further
// steps while Clean runs: they belong to the next Clean.
type Stack struct {
	mu    sync.Mutex
	steps []func() error
}

// Add pushes f, a step that cannot fail.
func (s *Stack) Add(f func()) {
	s.AddErr(func() error { f(); return nil })
}

// AddErr pushes f, a step whose error Clean returns.
func (s *Stack) AddErr(f func() error) {
	s.mu.Lock()
	s.steps = append(s.steps, f)
	s.mu.Unlock()
}

// Clean runs the steps, last added first, and empties the stack, so that
// each step runs once however often Clean is called. A step that fails
// does not stop the ones below it (each undoes something of its own); the
// result is the failed steps' errors joined (errors.Join), in the order
// they ran, or nil when none failed.
func (s *Stack) Clean() error {
	s.mu.Lock()
	steps := s.steps
	s.steps = nil
	s.mu.Unlock()
	var errs []error
	for i := len(steps) - 1; i >= 0; i-- {
		if err := steps[i](); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Release forgets the steps without running them: the set-up succeeded,
// and what it made now has an owner that undoes it.
func (s *Stack) Release() {
	s.mu.Lock()
	s.steps = nil
	s.mu.Unlock()
}
