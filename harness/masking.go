package harness

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"sandboxlab/report"
	"sandboxlab/verdict"
)

// Masking discovery: one layer hiding another's defect. A probe that
// reaches a defect's site and still misses it may be looking through a
// layer that stops the evidence before the broken one is needed (the
// course's case: a timeout that kills only the leader hides behind the CPU
// limit, which kills the busy children a little later). So the probe is
// run again with that defect on and each other layer of its level taken
// away, one at a time; a layer whose removal makes the probe catch the
// defect, while the probe still passes on the correct sandbox without the
// layer and misses the defect again as it was, masks the defect from that
// probe.
//
// Which probes are tried, so that the search costs minutes and not
// hours:
//   - every check the prediction names for a defect, that reaches its
//     site and missed it;
//   - every attack cell predicted to escape with the defect on that was
//     stopped;
//   - every check that takes layers away on purpose (the tree-kill check
//     takes the CPU limit away), run plain, with its removals undone,
//     for each defect it reaches: when the plain check misses a defect
//     that the check as written catches, each layer is tried on the
//     plain check too, which rediscovers why the check was written so.
//
// Checks of a defect that no prediction names and that are not plain
// variants are not tried: every layer of every level against every check
// that merely reaches a site (the resource limits are asked on every run)
// would be tens of thousands of runs.

// maskCandidate is one probe that missed one defect and is searched.
type maskCandidate struct {
	defect report.Defect
	probe  string
	plain  bool
	layers []string // the layers to take away in turn
}

// variant is one way to run a probe: as it is, plain, without a layer.
type variant struct {
	probe   string
	plain   bool
	without string
}

func (v variant) task(defect string) Task {
	return Task{Probe: v.probe, Defect: defect, Plain: v.plain, Without: v.without}
}

// findMasks runs the masking search over the judged defects.
func (r *Runner) findMasks(ctx context.Context, pl *pool, defects []report.Defect, base *baseRun, prog *progressor) []report.Mask {
	var cands []maskCandidate
	for _, d := range defects {
		if d.Outcome.NoVerdict() || d.Outcome == verdict.Untestable {
			continue
		}
		cands = append(cands, r.maskCandidates(d, base)...)
	}
	// The plain checks first: a plain check that still catches the defect
	// needs no layer search.
	var plainRuns []variantRun
	for _, c := range cands {
		if c.plain {
			plainRuns = append(plainRuns, variantRun{v: variant{probe: c.probe, plain: true}, defect: c.defect.ID})
		}
	}
	r.runVariants(ctx, pl, plainRuns, prog)
	caughtPlain := map[[2]string]bool{}
	for _, vr := range plainRuns {
		if vr.catches(base) {
			caughtPlain[[2]string{vr.defect, vr.v.probe}] = true
		}
	}
	var tries []variantRun
	baseVariants := map[variant]bool{}
	for _, c := range cands {
		if c.plain && caughtPlain[[2]string{c.defect.ID, c.probe}] {
			continue
		}
		// The control: the probe as it missed the defect, run again in the
		// same batch as the layers' tries; a layer counts only if the
		// control misses again.
		tries = append(tries, variantRun{v: variant{probe: c.probe, plain: c.plain}, defect: c.defect.ID})
		for _, l := range c.layers {
			v := variant{probe: c.probe, plain: c.plain, without: l}
			tries = append(tries, variantRun{v: v, defect: c.defect.ID})
			baseVariants[v] = true
		}
	}
	for v := range baseVariants {
		tries = append(tries, variantRun{v: v})
	}
	r.runVariants(ctx, pl, tries, prog)
	clean := map[variant]bool{}
	missedAgain := map[[3]string]bool{}
	for _, vr := range tries {
		switch {
		case vr.defect == "" && vr.err == nil && !vr.fails():
			clean[vr.v] = true
		case vr.defect != "" && vr.v.without == "" && vr.err == nil && !vr.catches(base):
			missedAgain[[3]string{vr.defect, vr.v.probe, fmt.Sprint(vr.v.plain)}] = true
		}
	}
	var masks []report.Mask
	for _, vr := range tries {
		if vr.defect != "" && vr.v.without != "" && clean[vr.v] && vr.catches(base) &&
			missedAgain[[3]string{vr.defect, vr.v.probe, fmt.Sprint(vr.v.plain)}] {
			masks = append(masks, report.Mask{Defect: vr.defect, Probe: vr.v.probe, Plain: vr.v.plain, Layer: vr.v.without})
		}
	}
	slices.SortStableFunc(masks, func(a, b report.Mask) int { return defectIndex(a.Defect) - defectIndex(b.Defect) })
	return masks
}

// maskCandidates lists the probes to search for one defect.
func (r *Runner) maskCandidates(d report.Defect, base *baseRun) []maskCandidate {
	var out []maskCandidate
	failed := set(d.FailedChecks)
	escaped := set(d.EscapedAttacks)
	reached := set(d.Reached)
	for _, c := range d.PredictedChecks {
		if reached[c] && !failed[c] {
			out = append(out, maskCandidate{defect: d, probe: c, layers: without(base.layers[c], base.tookAway[c])})
		}
	}
	for _, c := range d.PredictedAttacks {
		if reached[c] && !escaped[c] {
			out = append(out, maskCandidate{defect: d, probe: c, layers: base.layers[c]})
		}
	}
	for _, p := range d.Reached {
		if len(base.tookAway[p]) > 0 && failed[p] {
			out = append(out, maskCandidate{defect: d, probe: p, plain: true, layers: base.layers[p]})
		}
	}
	return out
}

// without returns list less the items of drop.
func without(list, drop []string) []string {
	var out []string
	for _, l := range list {
		if !slices.Contains(drop, l) {
			out = append(out, l)
		}
	}
	return out
}

// variantRun is one run of a variant, with a defect on or not.
type variantRun struct {
	v      variant
	defect string
	res    *ProbeResult
	err    error
}

// fails reports whether the run's probe failed: a check failed, a cell
// escaped.
func (vr *variantRun) fails() bool {
	return vr.res != nil && (vr.res.Check != nil && !vr.res.Check.Passed || vr.res.Cell != nil && vr.res.Cell.Escaped)
}

// catches reports whether the run caught its defect: its probe failed,
// and a cell counts only where the correct sandbox stops it.
func (vr *variantRun) catches(base *baseRun) bool {
	if vr.err != nil || !vr.fails() {
		return false
	}
	if vr.res.Cell != nil {
		c, ok := base.work.result.Attacks.Cell(vr.res.Cell.Attack, vr.res.Cell.Level)
		return ok && !c.Escaped
	}
	return true
}

// runVariants runs the variant runs one at a time, filling in their
// results; an error (a hung probe too) leaves a run undecided. One at a
// time, because a variant is the probe with a layer its check took away
// on purpose put back, or another taken away: its CPU is not what the
// baseline measured (the plain tree-kill check's children spin until the
// CPU limit kills them), and on a shared machine a busy neighbour would
// make it miss or catch by the clock rather than by the layer.
func (r *Runner) runVariants(ctx context.Context, pl *pool, runs []variantRun, prog *progressor) {
	prog.update(func(p *Progress) { p.Phase, p.ProbesDone, p.ProbesTotal = PhaseMasking, 0, len(runs) })
	var wg sync.WaitGroup
	for i := range runs {
		t := pl.enqueueWhole(false)
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := pl.wait(ctx, t)
			if err != nil {
				runs[i].err = err
				return
			}
			pr := r.runTask(ctx, runs[i].v.task(runs[i].defect), pl, release)
			release()
			runs[i].res, runs[i].err = pr.result, pr.err
			prog.update(func(p *Progress) { p.ProbesDone++ })
		}()
	}
	wg.Wait()
}
