package checks

// All lists the 26 promise checks in the order of the README. Each lives
// in the file named after its id.
var All = []*Check{
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
	// The hardening suite.
	noHostState,
	sessionsApart,
	noHostSockets,
	freshKeyring,
}
