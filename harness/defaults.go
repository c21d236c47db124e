package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"time"

	"sandboxlab"
	"sandboxlab/attacks"
	"sandboxlab/checks"
	"sandboxlab/report"
	"sandboxlab/sandbox"
	"sandboxlab/verdict"
)

// What a real run uses unless told otherwise; the CLI's flags default to
// these, and the mutation tests run with them.

// DefaultTimeout bounds one probe's run; past it the probe's defect is
// reported as hung.
const DefaultTimeout = 6 * time.Minute

// DefaultJobs bounds the probes at once: four per core. Most probes wait
// on wall clocks (1.5 s timeouts, sleeping programs) and weigh little;
// the pool keeps their expected CPU within the cores, so the bound only
// caps how many processes and sandboxes are alive at once.
func DefaultJobs() int { return 4 * runtime.NumCPU() }

// DefaultCores is how much expected CPU the pool lets run at once: the
// machine's cores and an eighth more. A probe's weight is its mean CPU
// share, but its CPU comes in bursts (an interpreter's start, then a wait
// on a clock), so a pool filled to exactly the cores leaves them idle
// between bursts; the eighth keeps them busy, and is less than the
// course's checks were made to hold under (three busy workers on two
// cores).
func DefaultCores() float64 { return float64(runtime.NumCPU()) * 1.125 }

// Registered is what a predictions file may name: every registered check
// and attack with its suite, and every planted defect.
func Registered() Universe {
	u := Universe{Checks: checks.IDs(), Attacks: attacks.IDs(), Levels: sandbox.Levels,
		CheckSuites: map[string]verdict.Suite{}, AttackSuites: map[string]verdict.Suite{}, Touches: map[string][]string{}}
	for _, c := range checks.All {
		u.CheckSuites[c.ID] = c.Suite
		if c.Touches != nil {
			u.Touches[c.ID] = c.Touches
		}
	}
	for _, a := range attacks.All() {
		u.AttackSuites[a.ID] = a.Suite
		if a.Touches != nil {
			u.Touches[a.ID] = a.Touches
		}
	}
	return u
}

// LoadPredictions reads the predictions file, or the predictions.yaml
// built into the binary when file is "", against the registries, and
// returns it with a digest of its bytes (which tells shards of other
// predictions apart).
func LoadPredictions(file string) (*Predictions, string, error) {
	data, name := sandboxlab.Predictions, "the built-in predictions.yaml"
	if file != "" {
		var err error
		if data, err = os.ReadFile(file); err != nil {
			return nil, "", err
		}
		name = file
	}
	preds, err := ParsePredictions(data, Registered())
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	sum := sha256.Sum256(data)
	return preds, "sha256:" + hex.EncodeToString(sum[:]), nil
}

// Identity says who runs the harness and as whom the sandboxed programs
// run, for every report.
func Identity() report.Identity {
	return report.Identity{UID: os.Geteuid(), Root: sandbox.HostRoot(), ProgramUID: sandbox.HostIdentity().UID}
}
