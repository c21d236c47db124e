package sandbox

// cleanup collects what to undo if a multi-step set-up fails half way, in
// the spirit of gVisor's pkg/cleanup: Add after each step, defer Clean,
// Release once the set-up has succeeded and the result has an owner.
type cleanup struct {
	fns []func()
}

// Add registers f to run on Clean.
func (c *cleanup) Add(f func()) {
	c.fns = append(c.fns, f)
}

// Clean runs the registered functions in reverse order, once.
func (c *cleanup) Clean() {
	for i := len(c.fns) - 1; i >= 0; i-- {
		c.fns[i]()
	}
	c.fns = nil
}

// Release forgets the registered functions: the set-up succeeded.
func (c *cleanup) Release() {
	c.fns = nil
}
