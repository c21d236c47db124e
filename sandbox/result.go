package sandbox

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os/exec"
	"time"

	"sandboxlab/sandbox/egress"
)

// Reason says why a run ended. A stopped run never looks like a finished one.
type Reason string

const (
	// ReasonExited: the program ended by itself (whatever its status).
	ReasonExited Reason = "exited"
	// ReasonTimeout: stopped at the wall-clock limit or the watchdog.
	ReasonTimeout Reason = "timeout"
	// ReasonCPU: stopped by the CPU limit (SIGXCPU, or SIGKILL at the hard limit).
	ReasonCPU Reason = "cpu"
	// ReasonMemory: failed for lack of memory (a heuristic on the error text).
	ReasonMemory Reason = "memory"
	// ReasonProcesses: stopped for having too many processes.
	ReasonProcesses Reason = "processes"
	// ReasonRefused: not started; Result.Message says why (the quota is
	// full, the isolation the policy asks for cannot be had, the program
	// cannot be executed).
	ReasonRefused Reason = "refused"
	// ReasonNotFound: not started, because the program does not exist.
	ReasonNotFound Reason = "not_found"
	// ReasonSignal: killed by a signal for any other reason (also when the
	// caller cancelled the run).
	ReasonSignal Reason = "signal"
	// ReasonBusy: not started, because every run slot of the host stayed
	// held for the queue's bound: the machine is busy, nothing ran, and
	// the same run may be tried again.
	ReasonBusy Reason = "busy"
	// ReasonInitLost: the sandbox failed. The run's init (PID 1 of its
	// namespaces, the program's reaper at L6) ended without reporting
	// the program's end, and its end took the program with it. How the
	// program would have ended is unknown: ExitCode is -1, and Message
	// says how the init ended.
	ReasonInitLost Reason = "init_lost"
)

// What carried out a stop the sandbox decided (Result.StoppedBy).
const (
	// StoppedBySupervisor: the caller's supervisor killed the run (the
	// time limit below L6, the process cap, a cancelled run).
	StoppedBySupervisor = "supervisor"
	// StoppedByInit: the init, PID 1 of the run's namespace, ended it at
	// its deadline (Processes.Reaper, L6).
	StoppedByInit = "init"
	// StoppedByBackstop: the init had not ended the run BackstopGrace
	// after its deadline, and the caller's supervisor killed it: a late
	// init, which should not happen.
	StoppedByBackstop = "backstop"
)

// Result is what a run did, as the host saw it.
type Result struct {
	// Level is the policy's level.
	Level int
	// Reason says why the run ended.
	Reason Reason
	// Message explains a refused run and what to do about it.
	Message string
	// ExitCode is the program's exit status, or -1 when a signal ended it.
	ExitCode int
	// Signal names the signal that ended the program ("" if it exited).
	Signal string
	// TimedOut is true when the wall-clock limit or the watchdog stopped it.
	TimedOut bool
	// StoppedBy says what carried out a stop the sandbox decided (a time
	// limit, the process cap, the caller's cancel): StoppedBySupervisor,
	// StoppedByInit or StoppedByBackstop; "" when it did not stop the run.
	StoppedBy string
	// KillLate is, for a run stopped at its time limit (Reason timeout),
	// how long after the deadline the host saw the program end: Wall less
	// Policy.TimeLimit, both counted from the start of the run's clock
	// (just before the program's start). It takes in the kill, the end of
	// every process of the run and the host noticing. Zero otherwise.
	KillLate time.Duration
	// InitLate is, for a run the init stopped at its deadline (StoppedBy
	// StoppedByInit), how long after the deadline the init found it up,
	// by its own clock: the part of KillLate that is the init's wake-up.
	// The rest is the kernel ending the namespace and the host noticing.
	// Zero otherwise.
	InitLate time.Duration
	// InitSetup is how long the init took from its exec to the program's
	// exec, as the host saw it: from the init's start to the close of its
	// report pipe, which the program's exec closes. It is zero where the
	// host cannot see that moment: without an init (L0), at L6, whose init
	// stays as the reaper and keeps the pipe, and when the init failed.
	// It is not part of the JSON form: a start-up figure (make bench).
	InitSetup time.Duration
	// RunQueueWait is, for a run stopped at its time limit, how long the
	// program's threads had waited for a CPU while runnable: the sum, over
	// every thread of the program's processes alive at the stop, of the
	// run-queue wait the kernel counts from each thread's start (the
	// second field of /proc/PID/task/TID/schedstat), read just before the
	// kill: by the init at its deadline (L6), else by the supervisor from
	// the program's process tree. RunQueueTasks is how many threads were
	// summed (0: nothing could be read). Threads that ended before the
	// stop are not counted; with several threads running at once the sum
	// can exceed Wall. RunQueueWaitMax is the longest of those threads'
	// waits.
	RunQueueWait    time.Duration
	RunQueueTasks   int
	RunQueueWaitMax time.Duration
	// Starved is true for a run stopped at its time limit one of whose
	// threads had waited for a CPU for at least half the limit
	// (RunQueueWaitMax >= Policy.TimeLimit / 2): the clock ran
	// out while the program was kept from running, by a busy machine or by
	// its own other threads. The stop stands; it only says the timeout is
	// no measure of the program's own speed.
	Starved bool
	// OOM is true when the program ran out of memory: with a control
	// group (L6) when the kernel's OOM killer killed one of its processes,
	// as the kernel counts it; without one, when the error text says so, a
	// heuristic (a limit on address space makes allocation fail inside the
	// program, which reports it in its own words).
	OOM bool
	// Stdout and Stderr are the returned text of each stream: everything,
	// or at most Limits.OutputChars characters with a marker in the middle.
	Stdout, Stderr string
	// StdoutTruncated and StderrTruncated say whether the middle was cut.
	StdoutTruncated, StderrTruncated bool
	// StdoutBytes and StderrBytes count every byte the program wrote.
	StdoutBytes, StderrBytes int64
	// Wall is the time from start to end; CPU is the user plus system time
	// of the program and the children it waited for (under a reaper that
	// saw the program end, of every process the reaper reaped; its own
	// is not counted).
	Wall, CPU time.Duration
	// Queued is how long the run waited for a slot of the host's before
	// anything was set up and its clock started (see DefaultMaxRunning).
	Queued time.Duration
	// Prestarted says the run went on an init its session had made for it
	// before it was asked for (Options.Prestart): its clock started at the
	// handover, not before the clone.
	Prestarted bool
	// Files lists the session directory after the run (at most MaxListed).
	Files []FileInfo
	// FilesTruncated says there were more files than listed.
	FilesTruncated bool

	// What the kernel counted in the run's control group (L6; zero
	// without one): MemoryPeak is the most real memory the run used at
	// once, in bytes; PidsPeak the most processes and threads alive at
	// once; ForksRefused the forks the process cap refused.
	MemoryPeak   int64
	PidsPeak     int
	ForksRefused int
	// LandlockABI is the Landlock ABI in force for the run (0: none).
	LandlockABI int

	// Network is the egress proxy's log of the run's requests, in the
	// order they came (nil when the policy allows no destination): each
	// decided, with its rule and the bytes each way. NetworkDropped counts
	// the requests past the log's limit.
	Network        []egress.Request
	NetworkDropped int
}

// FileInfo is one entry of the session directory.
type FileInfo struct {
	// Name is the slash-separated path below the session directory.
	Name string `json:"name"`
	// Size is the size in bytes (0 for directories).
	Size int64 `json:"size"`
	// Type is "file", "dir", "link" or "other".
	Type string `json:"type"`
	// NameBase64 is Name in base64 when Name is not valid UTF-8: JSON
	// cannot carry such a name (its bytes become U+FFFD), so a client
	// names the file by this instead.
	NameBase64 string `json:"name_base64,omitempty"`
}

// NotRun describes a run that never started because of err, as Session.Run
// or a caller's own lookup of the program reported it: not_found when the
// program does not exist, refused otherwise, with err as the message. It
// lets a caller that promises one Result per request keep that promise.
func NotRun(p Policy, err error) *Result {
	r := &Result{Level: p.Level, Reason: ReasonRefused, ExitCode: -1, Message: err.Error()}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound) {
		r.Reason = ReasonNotFound
	}
	return r
}

type resultJSON struct {
	Level           int        `json:"level"`
	Reason          Reason     `json:"reason"`
	Message         string     `json:"message,omitempty"`
	ExitCode        int        `json:"exit_code"`
	Signal          string     `json:"signal,omitempty"`
	TimedOut        bool       `json:"timed_out"`
	StoppedBy       string     `json:"stopped_by,omitempty"`
	KillLateMS      *int64     `json:"kill_late_ms,omitempty"`
	InitLateMS      *int64     `json:"init_late_ms,omitempty"`
	RunQueueWaitMS  *int64     `json:"run_queue_wait_ms,omitempty"`
	RunQueueTasks   *int       `json:"run_queue_tasks,omitempty"`
	RunQueueWaitMax *int64     `json:"run_queue_wait_max_ms,omitempty"`
	Starved         bool       `json:"starved,omitempty"`
	OOM             bool       `json:"oom"`
	Stdout          string     `json:"stdout"`
	Stderr          string     `json:"stderr"`
	StdoutTruncated bool       `json:"stdout_truncated"`
	StderrTruncated bool       `json:"stderr_truncated"`
	StdoutBytes     int64      `json:"stdout_bytes"`
	StderrBytes     int64      `json:"stderr_bytes"`
	WallMS          int64      `json:"wall_ms"`
	CPUMS           int64      `json:"cpu_ms"`
	Files           []FileInfo `json:"files"`
	FilesTruncated  bool       `json:"files_truncated"`
	MemoryPeak      int64      `json:"memory_peak,omitempty"`
	PidsPeak        int        `json:"pids_peak,omitempty"`
	ForksRefused    int        `json:"forks_refused,omitempty"`
	LandlockABI     int        `json:"landlock_abi,omitempty"`
	QueuedMS        int64      `json:"queued_ms"`
	Prestarted      bool       `json:"prestarted,omitempty"`
	// Network is present, even empty, whenever the run had the proxy.
	Network        *[]egress.Request `json:"network,omitempty"`
	NetworkDropped int               `json:"network_dropped,omitempty"`
}

// MarshalJSON encodes r with snake_case keys and times in milliseconds.
func (r *Result) MarshalJSON() ([]byte, error) {
	files := r.Files
	if files == nil {
		files = []FileInfo{}
	}
	var network *[]egress.Request
	if r.Network != nil {
		network = &r.Network
	}
	var late, wait, waitMax, initLate *int64
	var tasks *int
	if r.Reason == ReasonTimeout { // present, even zero, for every timeout
		l, w, m := r.KillLate.Milliseconds(), r.RunQueueWait.Milliseconds(), r.RunQueueWaitMax.Milliseconds()
		late, wait, waitMax, tasks = &l, &w, &m, &r.RunQueueTasks
		if r.StoppedBy == StoppedByInit {
			i := r.InitLate.Milliseconds()
			initLate = &i
		}
	}
	return json.Marshal(resultJSON{
		Level: r.Level, Reason: r.Reason, Message: r.Message, ExitCode: r.ExitCode, Signal: r.Signal,
		TimedOut: r.TimedOut, StoppedBy: r.StoppedBy, KillLateMS: late, InitLateMS: initLate, RunQueueWaitMS: wait, RunQueueTasks: tasks, RunQueueWaitMax: waitMax, Starved: r.Starved,
		OOM: r.OOM, Stdout: r.Stdout, Stderr: r.Stderr,
		StdoutTruncated: r.StdoutTruncated, StderrTruncated: r.StderrTruncated,
		StdoutBytes: r.StdoutBytes, StderrBytes: r.StderrBytes,
		WallMS: r.Wall.Milliseconds(), CPUMS: r.CPU.Milliseconds(),
		Files: files, FilesTruncated: r.FilesTruncated,
		MemoryPeak: r.MemoryPeak, PidsPeak: r.PidsPeak, ForksRefused: r.ForksRefused, LandlockABI: r.LandlockABI,
		Network: network, NetworkDropped: r.NetworkDropped, QueuedMS: r.Queued.Milliseconds(),
		Prestarted: r.Prestarted,
	})
}
