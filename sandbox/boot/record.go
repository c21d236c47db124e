package boot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// The init tells its parent why it failed in one record on its error
// pipe, and writes nothing when it execs the program (the pipe is
// close-on-exec). As the program's reaper (Processes.Reaper) it stays,
// and its one record says instead how the program ended: its wait status,
// or the deadline reached (see End). The record has a fixed binary
// layout, so that the init, or the program's process before its exec,
// can write it with bare system calls and no allocation once the
// program's resource limits are set (see execPlan):
//
//	offset  size  field
//	0       4     magic "sbxi"
//	4       1     version (1)
//	5       1     kind (InitErrorKind)
//	6       1     step (InitStep)
//	7       1     zero
//	8       4     errno, little-endian (0: none)
//	12      2     length of the message, little-endian
//	14      n     the message, UTF-8
//
// The reaper's records have no step and no errno, and a fixed payload in
// place of the message (integers little-endian): ProgramEnded the wait
// status (4 bytes), the CPU time of every process the init reaped, in ns
// (8), and 1 when the init was then alone in its namespace, else 0 (1);
// DeadlineReached when the init found the deadline up
// (CLOCK_MONOTONIC, 8 bytes), the program's run-queue wait in ns (8),
// the threads it was summed over (4) and the CPU time of its processes
// then alive, in ns (8).
//
// A record is at most PIPE_BUF bytes and written in one write, so it
// arrives whole or not at all; the parent reads to EOF and takes anything
// but one whole, well-formed record as an error, never as a started
// program.
const (
	recordMagic   = "sbxi"
	RecordVersion = 3
	RecordHeader  = 14
	RecordErrno   = 8 // offset of the errno
	RecordMax     = 4096
)

// InitErrorKind says which part of starting the program failed.
type InitErrorKind uint8

const (
	// InitSetupFailed: the init could not set the sandbox up, and ran
	// nothing. The error is ErrUnavailable.
	InitSetupFailed InitErrorKind = 1
	// InitExecFailed: the sandbox was set up, but the program could not
	// be executed. The error is os/exec's: a *fs.PathError for the exec,
	// so a missing program is fs.ErrNotExist.
	InitExecFailed InitErrorKind = 2

	// The reaper's records, never an error: the program ended by itself,
	// or the init ended the run at its deadline.
	ProgramEnded    InitErrorKind = 3
	DeadlineReached InitErrorKind = 4
)

// Payload sizes of the reaper's records.
const (
	endedPayload    = 13
	deadlinePayload = 36
)

func (k InitErrorKind) String() string {
	switch k {
	case InitSetupFailed:
		return "set-up failed"
	case InitExecFailed:
		return "exec failed"
	case ProgramEnded:
		return "program ended"
	case DeadlineReached:
		return "deadline reached"
	}
	return fmt.Sprintf("InitErrorKind(%d)", uint8(k))
}

// InitStep is the step of the init's work that failed, in the order the
// init takes them.
type InitStep uint8

const (
	StepStart         InitStep = iota + 1 // the init itself: its thread, its config, the planted defect
	StepEgress                            // opening the way to the egress proxy
	StepPrivateMounts                     // making every mount private
	StepMountProc                         // mounting /proc
	StepIdentity                          // naming the run and masking the host's identity in /proc
	StepHide                              // hiding a path
	StepPrivateDirs                       // covering the scratch directories
	StepRoot                              // building the allowlist root and pivoting into it
	StepKeyring                           // joining a fresh session keyring
	StepCapabilities                      // dropping capabilities
	StepNoNewPrivs                        // setting no_new_privs
	StepLandlock                          // restricting with Landlock
	StepSeccomp                           // installing the system-call filter
	StepCgroup                            // joining the run's control group
	StepEnvironment                       // handing the program its environment
	StepRlimits                           // setting the resource limits
	StepExec                              // executing the program
	stepEnd
)

var stepNames = [stepEnd]string{"", "starting the init", "opening the egress relay", "making mounts private",
	"mounting /proc", "taking the run's own identity", "hiding a path", "covering the private directories", "building the program's root", "joining a fresh keyring",
	"dropping capabilities", "setting no_new_privs", "restricting with Landlock", "installing the system-call filter",
	"joining the control group", "passing the environment", "setting resource limits", "executing the program"}

func (s InitStep) String() string {
	if s > 0 && s < stepEnd {
		return stepNames[s]
	}
	return fmt.Sprintf("InitStep(%d)", uint8(s))
}

// Record is one record as it travels.
type Record struct {
	Kind    InitErrorKind
	Step    InitStep
	Errno   syscall.Errno
	Message string
	// End is the reaper's report (kinds ProgramEnded and DeadlineReached),
	// nil in a failure's record.
	End *End
}

// End is how the program ended, as its reaper saw it.
type End struct {
	// Deadline is true when the init ended the run at its deadline; the
	// kernel then killed the program (SIGKILL) as the namespace ended.
	Deadline bool
	// Status is the program's wait status when it ended by itself.
	Status syscall.WaitStatus
	// Alone, when the program ended by itself, is true when the init had
	// then reaped every other process of its namespace too: nothing of the
	// run is left but the init, which only exits (see runStart.early).
	Alone bool
	// At is when the init found the deadline up (CLOCK_MONOTONIC, ns).
	At int64
	// RunQueueWait is the program's wait for a CPU at the deadline,
	// RunQueueTasks the threads it was summed over and RunQueueWaitMax
	// the longest one thread's (see usage); CPU is, at the deadline, the
	// CPU time of its processes then alive, which their kill leaves out
	// of the init's rusage (see usage), and, when the program ended by
	// itself, that of every process the init reaped: the program's, with
	// whatever it waited for, and its orphans'.
	RunQueueWait    time.Duration
	RunQueueTasks   int
	RunQueueWaitMax time.Duration
	CPU             time.Duration
}

// EndRecord is the record of the program's end.
func EndRecord(e End) Record {
	if e.Deadline {
		return Record{Kind: DeadlineReached, End: &e}
	}
	return Record{Kind: ProgramEnded, End: &e}
}

// payload is the message area of r: its text, or the reaper's fields.
func (r Record) payload() string {
	if r.End == nil {
		msg := strings.ToValidUTF8(r.Message, "\uFFFD")
		if len(msg) > RecordMax-RecordHeader {
			msg = strings.ToValidUTF8(msg[:RecordMax-RecordHeader], "")
		}
		return msg
	}
	if !r.End.Deadline {
		b := binary.LittleEndian.AppendUint32(nil, uint32(r.End.Status))
		b = binary.LittleEndian.AppendUint64(b, uint64(r.End.CPU))
		alone := byte(0)
		if r.End.Alone {
			alone = 1
		}
		return string(append(b, alone))
	}
	b := binary.LittleEndian.AppendUint64(nil, uint64(r.End.At))
	b = binary.LittleEndian.AppendUint64(b, uint64(r.End.RunQueueWait))
	b = binary.LittleEndian.AppendUint32(b, uint32(r.End.RunQueueTasks))
	b = binary.LittleEndian.AppendUint64(b, uint64(r.End.CPU))
	return string(binary.LittleEndian.AppendUint64(b, uint64(r.End.RunQueueWaitMax)))
}

// encode lays r out as the parent reads it, the message cut to fit.
func (r Record) Encode() []byte {
	msg := r.payload()
	b := make([]byte, RecordHeader, RecordHeader+len(msg))
	copy(b, recordMagic)
	b[4], b[5], b[6] = RecordVersion, byte(r.Kind), byte(r.Step)
	binary.LittleEndian.PutUint32(b[RecordErrno:], uint32(r.Errno))
	binary.LittleEndian.PutUint16(b[12:], uint16(len(msg)))
	return append(b, msg...)
}

// ErrReport is wrapped by the error for a report of the init's that
// is not one whole record.
var ErrReport = errors.New("unreadable report from the init")

// DecodeRecord reads one whole record, and refuses anything else.
func DecodeRecord(b []byte) (Record, error) {
	bad := func(format string, args ...any) (Record, error) {
		return Record{}, fmt.Errorf("%w: "+format, append([]any{ErrReport}, args...)...)
	}
	if len(b) < RecordHeader {
		return bad("%d bytes, short of a record's header", len(b))
	}
	if string(b[:4]) != recordMagic || b[4] != RecordVersion || b[7] != 0 {
		return bad("not a version %d record: % x", RecordVersion, b[:8])
	}
	r := Record{Kind: InitErrorKind(b[5]), Step: InitStep(b[6]), Errno: syscall.Errno(binary.LittleEndian.Uint32(b[RecordErrno:]))}
	if n := int(binary.LittleEndian.Uint16(b[12:])); RecordHeader+n != len(b) {
		return bad("a message of %d bytes in a record of %d", n, len(b))
	}
	msg := b[RecordHeader:]
	if r.Kind == ProgramEnded || r.Kind == DeadlineReached {
		return decodeEnd(r, msg)
	}
	switch {
	case r.Kind != InitSetupFailed && r.Kind != InitExecFailed:
		return bad("unknown kind %d", r.Kind)
	case r.Step == 0 || r.Step >= stepEnd:
		return bad("unknown step %d", r.Step)
	case (r.Kind == InitExecFailed) != (r.Step == StepExec):
		return bad("%s at step %s", r.Kind, r.Step)
	case r.Kind == InitExecFailed && r.Errno == 0:
		return bad("a failed exec without an errno")
	case !utf8.Valid(msg):
		return bad("a message that is not UTF-8")
	}
	r.Message = string(msg)
	return r, nil
}

// decodeEnd reads the payload of one of the reaper's records, whose
// header r holds.
func decodeEnd(r Record, payload []byte) (Record, error) {
	want := endedPayload
	if r.Kind == DeadlineReached {
		want = deadlinePayload
	}
	if r.Step != 0 || r.Errno != 0 || len(payload) != want {
		return Record{}, fmt.Errorf("%w: a %s record with step %d, errno %d and %d bytes of payload",
			ErrReport, r.Kind, r.Step, r.Errno, len(payload))
	}
	le := binary.LittleEndian
	if r.Kind == ProgramEnded {
		if payload[12] > 1 {
			return Record{}, fmt.Errorf("%w: a %s record whose last byte is %d, not 0 or 1", ErrReport, r.Kind, payload[12])
		}
		return EndRecord(End{Status: syscall.WaitStatus(le.Uint32(payload)), CPU: time.Duration(le.Uint64(payload[4:])),
			Alone: payload[12] == 1}), nil
	}
	return EndRecord(End{Deadline: true, At: int64(le.Uint64(payload)),
		RunQueueWait: time.Duration(le.Uint64(payload[8:])), RunQueueTasks: int(le.Uint32(payload[16:])),
		CPU: time.Duration(le.Uint64(payload[20:])), RunQueueWaitMax: time.Duration(le.Uint64(payload[28:]))}), nil
}

// initFailure is a failure inside the init, with the step it failed at:
// initMain sends it as a record.
type initFailure struct {
	kind InitErrorKind
	step InitStep
	err  error
}

func (f *initFailure) Error() string { return f.err.Error() }
func (f *initFailure) Unwrap() error { return f.err }

// failedAt marks err as the failure of a set-up step.
func failedAt(step InitStep, err error) error {
	return &initFailure{kind: InitSetupFailed, step: step, err: err}
}

// recordOf is the record for what runInit returned. The errno is the
// first in err's chain; the message is err's text less that errno's,
// which InitError.Error puts back.
func recordOf(err error) Record {
	r := Record{Kind: InitSetupFailed, Step: StepStart, Message: err.Error()}
	var f *initFailure
	if errors.As(err, &f) {
		r.Kind, r.Step = f.kind, f.step
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		r.Errno = errno
		r.Message = strings.TrimSuffix(r.Message, ": "+errno.Error())
	}
	return r
}
