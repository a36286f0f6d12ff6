//go:build !purego

#include "textflag.h"

// AVX2 row reductions (declaration and use: kernels_rowreduce_amd64.go).

// func max8(x *float32, n int) (m float32, nan bool)
// The largest of x[:n] (n a multiple of 8, at least 8) by VMAXPS over 8
// lanes, and whether any value is NaN (VMAXPS passes NaN on unevenly,
// so a NaN makes the answer the caller's to find).
TEXT ·max8(SB), NOSPLIT, $0-21
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $3, CX
	VMOVUPS (SI), Y0
	VCMPPS $3, Y0, Y0, Y2 // unordered with itself: NaN
	ADDQ $32, SI
	DECQ CX
	JZ   reduce

loop:
	VMOVUPS (SI), Y1
	VMAXPS Y0, Y1, Y0
	VCMPPS $3, Y1, Y1, Y3
	VORPS Y3, Y2, Y2
	ADDQ $32, SI
	DECQ CX
	JNZ  loop

reduce:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VMOVHLPS X0, X0, X1
	VMAXPS X1, X0, X0
	VMOVSHDUP X0, X1
	VMAXSS X1, X0, X0
	VMOVSS X0, m+16(FP)
	VMOVMSKPS Y2, AX
	TESTL AX, AX
	SETNE nan+20(FP)
	VZEROUPPER
	RET

// func firstEq8(x *float32, n int, v float32) int
// The first index j < n (n a multiple of 8) with x[j] == v (IEEE: -0 and
// +0 equal), or -1.
TEXT ·firstEq8(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS v+16(FP), Y1
	XORQ DX, DX

loop:
	CMPQ DX, CX
	JGE  none
	VCMPPS $0, (SI)(DX*4), Y1, Y0
	VMOVMSKPS Y0, AX
	TESTL AX, AX
	JNZ  found
	ADDQ $8, DX
	JMP  loop

found:
	BSFL AX, AX
	ADDQ AX, DX
	MOVQ DX, ret+24(FP)
	VZEROUPPER
	RET

none:
	MOVQ $-1, ret+24(FP)
	VZEROUPPER
	RET

// func sum8(x *float32, n int, a *[8]float32)
// a[i] += x[i], x[i+8], … in order for x[:n] (n a multiple of 8): sumRow's
// eight running sums, lane by lane.
TEXT ·sum8(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ a+16(FP), DI
	VMOVUPS (DI), Y0
	SHRQ $3, CX
	JZ   done

loop:
	VADDPS (SI), Y0, Y0
	ADDQ $32, SI
	DECQ CX
	JNZ  loop

done:
	VMOVUPS Y0, (DI)
	VZEROUPPER
	RET
