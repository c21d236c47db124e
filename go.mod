module sandboxlab

go 1.26.8

require (
	golang.org/x/sys v0.12.0
	gotest.tools/v3 v3.5.2
)

require github.com/google/go-cmp v0.5.9 // indirect
