package sandbox

import "sandboxlab/sandbox/boot"

// The init's body is package boot, so that the init's binary links what
// the init runs and no more (see cmd/sandboxlab-init). These are the
// names this package gives boot's side of the protocol: the config it
// writes, the records it reads.

type (
	initConfig = boot.Config
	rootSpec   = boot.RootSpec
	rlimit     = boot.Rlimit
	egressInit = boot.EgressInit
	reaperInit = boot.ReaperInit
	goRecord   = boot.GoRecord
	initRecord = boot.Record
	initEnd    = boot.End
	usage      = boot.Usage

	// InitErrorKind says which part of starting the program failed.
	InitErrorKind = boot.InitErrorKind
	// InitStep is the step of the init's work that failed, in the order
	// the init takes them.
	InitStep = boot.InitStep
)

// The kinds and steps an *InitError names.
const (
	InitSetupFailed = boot.InitSetupFailed
	InitExecFailed  = boot.InitExecFailed

	StepStart         = boot.StepStart
	StepEgress        = boot.StepEgress
	StepPrivateMounts = boot.StepPrivateMounts
	StepMountProc     = boot.StepMountProc
	StepIdentity      = boot.StepIdentity
	StepHide          = boot.StepHide
	StepPrivateDirs   = boot.StepPrivateDirs
	StepRoot          = boot.StepRoot
	StepKeyring       = boot.StepKeyring
	StepCapabilities  = boot.StepCapabilities
	StepNoNewPrivs    = boot.StepNoNewPrivs
	StepLandlock      = boot.StepLandlock
	StepSeccomp       = boot.StepSeccomp
	StepCgroup        = boot.StepCgroup
	StepEnvironment   = boot.StepEnvironment
	StepRlimits       = boot.StepRlimits
	StepExec          = boot.StepExec
)

const (
	initArg0      = boot.Arg0
	initErrFD     = boot.ErrFD
	cgroupTasksFD = boot.CgroupTasksFD
	recordHeader  = boot.RecordHeader
	recordMax     = boot.RecordMax
)

var (
	initEnv          = boot.Env
	encodeConfig     = boot.EncodeConfig
	decodeConfig     = boot.DecodeConfig
	decodeInitRecord = boot.DecodeRecord
	errInitReport    = boot.ErrReport
	readUsage        = boot.ReadUsage
	readSmallFile    = boot.ReadSmallFile
	monotonicNow     = boot.MonotonicNow
)
