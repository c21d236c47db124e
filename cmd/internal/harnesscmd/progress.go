package harnesscmd

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/sys/unix"

	"sandboxlab/harness"
)

// progress shows how far a command is, on stderr. It is on when stderr
// is a terminal (a person waits for a run of minutes) or with --verbose
// (a CI log), off with --quiet and when stderr is a pipe or a file, so
// captured output stays clean. Each finished step is one line. On a
// terminal a live progress bar (mpb) sits below the lines, with the
// steps done and a status (for mutate: elapsed and the estimate of the
// time left); in a log there is no bar, since redrawing means nothing
// there.
type progress struct {
	w   io.Writer
	on  bool
	tty bool

	mu   sync.Mutex
	bars *mpb.Progress // nil: no bar
	bar  *mpb.Bar
}

func newProgress(w io.Writer, quiet, verbose bool) *progress {
	f, ok := w.(*os.File)
	tty := ok && isTerminal(f)
	return &progress{w: w, on: !quiet && (tty || verbose), tty: tty}
}

// isTerminal reports whether f is a terminal (it answers TCGETS).
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// terminalWidth returns the width of the terminal f is, or 0.
func terminalWidth(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return 0
	}
	return int(ws.Col)
}

// start shows the bar, on a terminal only: name, then the steps done of
// total (0: not known yet, when label says what runs meanwhile), then
// status() if status is set. It is redrawn a few times a second until
// end.
func (p *progress) start(name string, total int, label func() string, status func() string) {
	if !p.on || !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// Refreshed whatever mpb makes of the writer: the caller has found
	// a terminal, and the lines above the bar go out at each refresh.
	p.bars = mpb.New(mpb.WithOutput(p.w), mpb.WithWidth(40), mpb.WithRefreshRate(200*time.Millisecond), mpb.ForceAutoRefresh())
	steps := decor.Any(func(s decor.Statistics) string {
		if s.Total <= 0 && label != nil {
			return label()
		}
		return fmt.Sprintf("%d/%d", s.Current, s.Total)
	}, decor.WCSyncSpaceR)
	opts := []mpb.BarOption{mpb.PrependDecorators(decor.Name(name, decor.WCSyncSpaceR), steps), mpb.BarRemoveOnComplete()}
	if status != nil {
		opts = append(opts, mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return status() })))
	}
	p.bar = p.bars.AddBar(int64(total), opts...)
}

// set moves the bar to done steps of total.
func (p *progress) set(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil {
		return
	}
	p.bar.SetTotal(int64(total), false)
	p.bar.SetCurrent(int64(done))
}

// line prints a finished step: above the bar on a terminal, as a line
// of its own in a log.
func (p *progress) line(format string, args ...any) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bars != nil {
		fmt.Fprintf(p.bars, format+"\n", args...)
		return
	}
	fmt.Fprintf(p.w, format+"\n", args...)
}

// end removes the bar, once the lines above it are out, so the report
// that follows starts on a clean line of the terminal. It may be called
// more than once.
func (p *progress) end() {
	p.mu.Lock()
	bars, bar := p.bars, p.bar
	p.bars, p.bar = nil, nil
	p.mu.Unlock()
	if bars == nil {
		return
	}
	bar.Abort(true)
	bars.Wait()
}

// counter formats "[done/total]" with total's width, so lines align.
func counter(done, total int) string {
	w := len(fmt.Sprint(total))
	return fmt.Sprintf("[%*d/%d]", w, done, total)
}

// roundDuration rounds d to seconds for people.
func roundDuration(d time.Duration) time.Duration { return d.Round(time.Second) }

// mutateETA prints the progress of a mutation run: a line when the
// baseline ends and one per finished defect, and on a terminal a bar of
// the probe runs of the phase under way (the baseline, the defects, the
// masking search) with the time elapsed and an estimate of the time left.
// The estimate extrapolates the phase from its probe runs done, which
// selection has already counted: a defect's unreached probes are no part
// of it.
type mutateETA struct {
	p     *progress
	shard harness.Shard

	mu         sync.Mutex
	start      time.Time
	phaseStart time.Duration // when the phase under way began
	last       harness.Progress
	finish     time.Time // the estimated end of the phase (zero: none yet)
}

func newMutateETA(p *progress, shard harness.Shard) *mutateETA {
	e := &mutateETA{p: p, shard: shard, start: time.Now(), last: harness.Progress{Phase: harness.PhaseBaseline}}
	p.start("mutate", 0, e.label, e.status)
	return e
}

// label names the phase under way on the bar.
func (e *mutateETA) label() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.prefix() + e.last.Phase
}

// step records the runner's progress and prints a line when the baseline
// or a defect has finished.
func (e *mutateETA) step(pr harness.Progress) {
	e.mu.Lock()
	prev := e.last
	e.last = pr
	if prev.Phase != pr.Phase {
		e.phaseStart, e.finish = pr.Elapsed, time.Time{}
	}
	e.estimate(pr)
	left := e.left()
	e.mu.Unlock()
	e.p.set(pr.ProbesDone, pr.ProbesTotal)
	switch {
	case prev.Phase == harness.PhaseBaseline && pr.Phase == harness.PhaseDefects:
		e.p.line("%sbaseline done in %s (%d probe runs); %d defects to run, %d probe runs", e.prefix(),
			roundDuration(pr.Elapsed), prev.ProbesTotal, pr.Total, pr.ProbesTotal)
	case pr.Defect.ID != "":
		line := fmt.Sprintf("%s%s %-28s %-8s %4d probes %4ds  %s", e.prefix(), counter(pr.Done, pr.Total), pr.Defect.ID,
			pr.Defect.Outcome, pr.Defect.Probes, pr.Defect.MS/1000, roundDuration(pr.Elapsed))
		// The estimate only where the line still fits 80 columns (a log's
		// or a terminal's; the bar has it too).
		if len(line)+len(left) <= 80 {
			line += left
		}
		e.p.line("%s", line)
	}
}

// prefix names the shard, if any, in every line.
func (e *mutateETA) prefix() string {
	if s := e.shard.String(); s != "" {
		return "shard " + s + ": "
	}
	return ""
}

// status is the bar's text after the defects done: the time elapsed and
// the estimate of the time left.
func (e *mutateETA) status() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	elapsed := roundDuration(time.Since(e.start))
	pr := e.last
	if pr.Phase != harness.PhaseDefects {
		return fmt.Sprintf("probe runs, %s elapsed%s", elapsed, e.left())
	}
	return fmt.Sprintf("probe runs, %d of %d defects, %s elapsed%s", pr.Done, pr.Total, elapsed, e.left())
}

// estimate extrapolates the end of the phase under way from its probe
// runs done. The caller holds mu.
func (e *mutateETA) estimate(pr harness.Progress) {
	spent := pr.Elapsed - e.phaseStart
	if pr.ProbesDone == 0 || pr.ProbesTotal <= pr.ProbesDone || spent <= 0 {
		e.finish = time.Time{}
		return
	}
	per := float64(spent) / float64(pr.ProbesDone)
	e.finish = e.start.Add(pr.Elapsed + time.Duration(per*float64(pr.ProbesTotal-pr.ProbesDone)))
}

// left words the estimate; between two steps it counts down rather than
// grow with the wait. The caller holds mu.
func (e *mutateETA) left() string {
	switch {
	case e.finish.IsZero():
		return ""
	case time.Until(e.finish) < time.Second:
		return ", finishing"
	}
	what := "left"
	if e.last.Phase != harness.PhaseDefects {
		what = "left of the " + e.last.Phase
	}
	return fmt.Sprintf(", about %s %s", roundDuration(time.Until(e.finish)), what)
}
