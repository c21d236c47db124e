package sandboxlab

import "embed"

// Sources holds the library's source files as they were when the binary
// was built: the files of the planted sites (each defect's Site) are
// among them, and the Stryker report shows each defect in its file at its
// real line, which a checkout that has moved on since would not give.
//
//go:embed sandbox/*.go sandbox/*/*.go
var Sources embed.FS
