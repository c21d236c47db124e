//go:build !amd64

package seccomp

const hasCompatABI = false

func compatProbeMain([]string) int { return 1 }
