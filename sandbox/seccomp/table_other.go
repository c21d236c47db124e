//go:build !amd64

package seccomp

// native is nil where no table has been written and checked: Build fails
// closed with ErrUnsupported.
var native *table
