package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"

	"sandboxlab/mutants"
)

// A pre-started init (Options.Prestart).
//
// Most of a run's start is the same every time: the control group, the
// namespaces, a fresh copy of this binary as the init, its mounts and
// root, its layers (capabilities, no_new_privs, Landlock, the system-call
// filter). Only the program's arguments, its environment and the clock
// differ from one run to the next. A session that prestarts does all of
// the rest for the next run while it waits, as soon as a run has ended:
// the init stops before its exec and waits on a pipe for the go record.
// The next run of the same program in the same directory writes that
// record and is under way; a run of another program discards the waiting
// init and starts cold.
//
// Nothing is shared between runs that was not shared before: each run
// gets its own init, PID, network, IPC, UTS and mount namespaces, control
// group, pipes and egress relay, made for it and never used twice. The
// clock starts when the go record is written, as a cold run's starts
// before its clone: the time the init spent waiting is no run's. A
// pre-started init holds no slot (see slots.go): it takes no CPU while it
// waits, and the run takes its slot before it goes. Its making (tens of
// ms of CPU, as a cold start's) is not queued either: a session makes at
// most one at a time, after a run of its own.

// warmInit is a started init waiting for its go record, with everything
// of its run that a cold start makes before the clone.
type warmInit struct {
	key    string
	cmd    *exec.Cmd
	ps     *pipes
	rg     *runGroup
	eg     *egressRelay
	goW    *os.File
	reaper bool
}

// warmKey is what a pre-started init was made for: its root and its
// Landlock rules hold the program's path, and it stands in its working
// directory. The session's policy is fixed.
func warmKey(c Command) string { return c.Path + "\x00" + c.Dir }

// canPrestart reports whether a run under p can go on a pre-started init:
// one in namespaces of its own, with no planted defect on (the harness's
// defects switch sites between the clone and the exec, and a recorded
// coverage belongs to one probe's run).
func canPrestart(p Policy) bool {
	return p.userNS() && mutants.Active() == "" && mutants.ChildFile() == nil
}

// prestart starts the init for the next run of c under p in dir, up to
// its go record. Its error is the reason the run will start cold.
func prestart(p Policy, c Command, dir string) (*warmInit, error) {
	cwd, err := checkCommand(p, c, dir)
	if err != nil {
		return nil, err
	}
	w := &warmInit{key: warmKey(c)}
	made := false
	defer func() {
		if !made {
			w.discard() // what was made before the failure
		}
	}()
	if w.ps, err = newPipes(); err != nil {
		return nil, fmt.Errorf("creating output pipes: %w", err)
	}
	if w.rg, err = newRunGroup(p); err != nil {
		return nil, err
	}
	if err = checkSessionStore(p, dir); err != nil {
		return nil, err
	}
	if w.eg, err = newEgress(p); err != nil {
		return nil, err
	}
	l := hostLaunch(p)
	l.addNamespaces(p, c, dir)
	l.addReaper(p, 0) // the deadline comes with the go record
	w.reaper = l.cfg.Reaper != nil
	if w.rg != nil {
		l.group = w.rg
	}
	if w.eg != nil && l.ownNetwork() {
		l.egress = w.eg
	}
	goR, goW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating the go pipe: %w", err)
	}
	w.goW = goW
	defer goR.Close()
	if w.cmd, err = l.command(Command{Path: c.Path}, nil, cwd, w.ps, goR); err != nil {
		w.cmd = nil
		return nil, err
	}
	err = w.cmd.Start()
	w.ps.closeChildEnds()
	if w.rg != nil {
		w.rg.started()
	}
	if err != nil {
		w.cmd = nil
		return nil, startError(p, c, err)
	}
	w.eg.started()
	made = true
	return w, nil
}

// run runs c on w, if there is one and it can take the run, and
// supervises it; warm is false when c must start cold.
func (w *warmInit) run(ctx context.Context, p Policy, c Command, dir string) (o outcome, warm bool) {
	if w == nil {
		return o, false
	}
	rs, err := w.begin(p, c, dir)
	if err != nil {
		return o, false
	}
	o = (&liveRun{p: p, c: c, dir: dir, ps: w.ps, rg: w.rg, eg: w.eg, cmd: w.cmd, rs: rs}).supervise(ctx)
	o.network, o.networkDropped = w.eg.finish() // the program is gone: so is its way out
	return o, true
}

// begin starts c's run on w: it writes the go record, with the
// environment and the deadline a cold start would give c under p in dir,
// and returns when the run started. On error w is discarded, and nothing
// of c ran.
func (w *warmInit) begin(p Policy, c Command, dir string) (runStart, error) {
	// A session's warm run is settled by the session (Session.settle):
	// its Result can come at the reaper's report (see settleEarly).
	rs := runStart{at: time.Now(), reaper: w.reaper, mono: monotonicNow(), early: w.reaper}
	rec := goRecord{Args: append([]string{inside(p, dir, c.Path)}, c.Args...), Env: environment(p, c, dir)}
	if w.eg != nil && w.cmd.SysProcAttr.Cloneflags&unix.CLONE_NEWNET != 0 {
		rec.Env = append(rec.Env, proxyEnv(EgressProxy)...)
	}
	if w.reaper {
		rec.Reaper = newReaperInit(p, rs.mono)
	}
	text, err := encodeConfig(rec)
	if err == nil {
		_, err = w.goW.WriteString(text)
	}
	if cerr := w.goW.Close(); err == nil {
		err = cerr
	}
	w.goW = nil
	if err != nil {
		// The init is gone (it failed in its set-up, or was killed): a
		// cold start will meet the same failure and say what it is.
		w.discard()
		return rs, fmt.Errorf("handing the run to the pre-started init: %w", err)
	}
	return rs, nil
}

// discard ends an init that will not run anything, and releases what
// was made for its run. Nil-safe.
func (w *warmInit) discard() {
	if w == nil {
		return
	}
	if w.goW != nil {
		w.goW.Close() // an init still waiting exits at once (errDismissed)
	}
	if w.cmd != nil {
		w.cmd.Process.Kill()
		w.cmd.Wait()
	}
	if w.ps != nil {
		w.ps.close()
	}
	if w.rg != nil {
		w.rg.discard()
	}
	if w.eg != nil {
		if w.cmd != nil {
			w.eg.finish() // started: its server goroutine ends with it
		} else {
			w.eg.discard()
		}
	}
}
