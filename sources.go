package sandboxlab

import "embed"

// Sources holds, as they were when the binary was built, the sources a
// mutation verdict depends on: the library (sandbox/, with the planted
// sites: the Stryker report shows each defect in its file at its real
// line, which a checkout that has moved on since would not give), the
// checks, the attacks and their programs, the gate and the vocabulary,
// the files of the harness's worker, the result model the verdicts are
// kept in, and go.mod. The go tool compiles and embeds them in one build,
// so their digests (harness.ComputeInputs) describe the binary that runs
// the probes, not a checkout that may differ from it: mutate
// --incremental keys its reuse on them.
//
// Whole directories, not patterns of files, so that a file added at any
// depth (an assembly file, a new subpackage) cannot fall outside the
// digests unseen.
//
//go:embed sandbox checks attacks mutants verdict go.mod
//go:embed harness/worker.go harness/probe.go harness/jail.go
//go:embed report/model.go report/mutation.go
var Sources embed.FS
