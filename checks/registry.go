package checks

import "sandboxlab/verdict"

// All lists every promise check: the course's, then the hardening
// suite's, each with its suite. Each lives in the file named after its
// id.
var All = append(inSuite(verdict.Course, course), hardening...)

// hardening lists the checks beyond the course, in report order; each
// names its suite (Suite: verdict.Hardening).
var hardening = []*Check{
	noHostState,
	sessionsApart,
	noHostSockets,
	freshKeyring,
	tracedNotEnded,
	// L6, hardened.
	syscallFilter,
	landlockFS,
	hardProcessCap,
	realMemoryLimit,
	initHoldsDeadline,
	initIgnoresSignals,
	// L6 denies by default.
	hostSocketAbsent,
	noHostMetadata,
	unlistedSyscalls,
	diskCappedInRun,
	// L6 shares nothing with the host.
	noHostIdentity,
	noHostSessionPath,
	noMachineAIO,
	noHostWatch,
	noHostWriteback,
	// Network by allowlist, through the egress proxy.
	egressAllowed,
	egressUnlistedRefused,
	egressDenyWins,
	egressDirectFails,
	egressCredential,
	egressDenyAddress,
}

// inSuite gives each check of list the suite s.
func inSuite(s verdict.Suite, list []*Check) []*Check {
	for _, c := range list {
		c.Suite = s
	}
	return list
}

// course lists the course's 26 promise checks in the order of docs/course.md.
var course = []*Check{
	wallTimeout,
	timeoutFlag,
	timeoutKillsTree,
	cpuLimit,
	memoryLimit,
	fileSizeLimit,
	openFilesLimit,
	outputCap,
	sweepLeftovers,
	exitStatus,
	envScrubbed,
	privateWorkdir,
	filesPersist,
	sessionCleanup,
	noOrphans,
	processCap,
	noNetwork,
	hiddenPaths,
	noCapabilities,
	failClosed,
	namesTraversal,
	namesAbsolute,
	fileLinks,
	diskQuota,
	toolWording,
	toolErrors,
}
