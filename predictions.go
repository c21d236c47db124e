// Package sandboxlab holds what belongs to the project as a whole: the
// default predictions of the mutation harness, embedded so that the binary
// runs 'mutate' with them from any directory.
package sandboxlab

import _ "embed"

// Predictions is predictions.yaml as it was when the binary was built.
//
//go:embed predictions.yaml
var Predictions []byte
