//go:build !nomutants

package mutants

// Compiled reports whether planted sites exist in this build.
const Compiled = true

// active is the one defect switched on in this process ("" for none). It is
// set once at start-up, before any sandbox runs, so it needs no lock.
var active ID

// Enable switches on the defect id for the rest of the process ("" switches
// every defect off).
func Enable(id string) error {
	if id == "" {
		active = ""
		return nil
	}
	d, err := Lookup(id)
	if err != nil {
		return err
	}
	active = d.ID
	return nil
}

// Active returns the defect switched on in this process, or "".
func Active() ID { return active }

// On reports whether defect id is switched on. Planted sites call it;
// while coverage is recorded (Cover), it also notes that id's site was
// reached.
func On(id ID) bool {
	if covering {
		record(id)
	}
	return active == id
}
