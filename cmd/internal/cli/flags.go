package cli

import (
	"flag"
	"fmt"
	"strings"

	"sandboxlab/mutants"
)

// The flags that commands of both binaries share.

// DefectFlag is --defect, which switches one planted defect on for the
// rest of the process (the harness uses it; see 'sandboxlab mutate').
type DefectFlag struct{ defect string }

// AddFlag registers --defect on fs.
func (d *DefectFlag) AddFlag(fs *flag.FlagSet) {
	fs.StringVar(&d.defect, "defect", "", "switch on one planted `ID` (one of: "+strings.Join(mutants.IDs(), ", ")+")")
}

// Check refuses an unknown defect, or any defect in a build without
// planted sites.
func (d *DefectFlag) Check() error {
	if d.defect == "" {
		return nil
	}
	if _, err := mutants.Lookup(d.defect); err != nil {
		return fmt.Errorf("--defect: %w", err)
	}
	if !mutants.Compiled {
		return fmt.Errorf("--defect: %w", mutants.ErrNotCompiled)
	}
	return nil
}

// ID is the defect given ("" for none).
func (d *DefectFlag) ID() string { return d.defect }

// Enable switches the defect on.
func (d *DefectFlag) Enable() error {
	if err := mutants.Enable(d.defect); err != nil {
		return fmt.Errorf("--defect: %w", err)
	}
	return nil
}

// ListFlag is a flag that may be given more than once (--sandbox,
// --allow).
type ListFlag []string

func (l *ListFlag) String() string { return strings.Join(*l, ",") }

func (l *ListFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}
