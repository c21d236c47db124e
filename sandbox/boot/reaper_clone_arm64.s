// The bare clone of the init's child, sharing the init's memory until the
// child execs (see reaper_clone_vm.go). It is syscall.rawVforkSyscall of
// Go's own asm_linux_arm64.s (BSD-style licence, The Go Authors), which
// the standard library does not export. The return address stays in LR,
// out of the child's reach.

#include "textflag.h"

// func vforkSyscall(trap, a1, a2, a3 uintptr) (r1, err uintptr)
TEXT ·vforkSyscall(SB),NOSPLIT,$0-48
	MOVD	a1+8(FP), R0
	MOVD	a2+16(FP), R1
	MOVD	a3+24(FP), R2
	MOVD	$0, R3
	MOVD	$0, R4
	MOVD	$0, R5
	MOVD	trap+0(FP), R8	// syscall entry
	SVC
	CMN	$4095, R0
	BCC	ok
	MOVD	$-1, R4
	MOVD	R4, r1+32(FP)
	NEG	R0, R0
	MOVD	R0, err+40(FP)
	RET
ok:
	MOVD	R0, r1+32(FP)
	MOVD	ZR, err+40(FP)
	RET
