//go:build !purego

#include "textflag.h"

// AVX2/FMA exponential for the fast SDPA softmax (declaration:
// kernels_amd64.go).

// Constants of expSum (float32 bits): Cephes expf.
DATA expc<>+0(SB)/4, $0xc2b00000  // -88: below it exp underflows to 0
DATA expc<>+4(SB)/4, $0x3fb8aa3b  // log2(e)
DATA expc<>+8(SB)/4, $0xbf318000  // -ln2 (high part)
DATA expc<>+12(SB)/4, $0x395e8083 // -ln2 (low part)
DATA expc<>+16(SB)/4, $0x3f800000 // 1
DATA expc<>+20(SB)/4, $0x39506967 // p0..p5
DATA expc<>+24(SB)/4, $0x3ab743ce
DATA expc<>+28(SB)/4, $0x3c088908
DATA expc<>+32(SB)/4, $0x3d2aa9c1
DATA expc<>+36(SB)/4, $0x3e2aaaaa
DATA expc<>+40(SB)/4, $0x3f000000
DATA expc<>+44(SB)/4, $127
GLOBL expc<>(SB), RODATA|NOPTR, $48

// func expSum8(v *float32, n int, m float32) float32
// v[i] = exp(v[i] - m) for i < n (n%8 == 0, every v[i] ≤ m, -Inf or NaN),
// and returns their sum. exp(r + k·ln2) = 2^k·(1 + r + r²·p(r)), |r| ≤ ln2/2,
// within about 1 ulp; -Inf and values below m-88 give 0.
TEXT ·expSum8(SB), NOSPLIT, $0-28
	MOVQ v+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS m+16(FP), Y5
	VBROADCASTSS expc<>+4(SB), Y6
	VBROADCASTSS expc<>+8(SB), Y7
	VBROADCASTSS expc<>+12(SB), Y8
	VBROADCASTSS expc<>+16(SB), Y9
	VBROADCASTSS expc<>+20(SB), Y10
	VBROADCASTSS expc<>+24(SB), Y11
	VBROADCASTSS expc<>+28(SB), Y12
	VBROADCASTSS expc<>+32(SB), Y13
	VBROADCASTSS expc<>+36(SB), Y14
	VBROADCASTSS expc<>+40(SB), Y15
	VXORPS Y4, Y4, Y4
	TESTQ CX, CX
	JZ   done

loop:
	VMOVUPS (SI), Y0
	VSUBPS Y5, Y0, Y0
	VBROADCASTSS expc<>+0(SB), Y1
	VMAXPS Y0, Y1, Y0 // max(-88, x); a NaN x stays NaN
	VMULPS Y6, Y0, Y1
	VROUNDPS $0, Y1, Y1
	VFMADD231PS Y7, Y1, Y0
	VFMADD231PS Y8, Y1, Y0
	VMOVAPS Y10, Y3
	VFMADD213PS Y11, Y0, Y3
	VFMADD213PS Y12, Y0, Y3
	VFMADD213PS Y13, Y0, Y3
	VFMADD213PS Y14, Y0, Y3
	VFMADD213PS Y15, Y0, Y3
	VMULPS Y0, Y0, Y2
	VFMADD213PS Y0, Y2, Y3
	VADDPS Y9, Y3, Y3
	VCVTPS2DQ Y1, Y1
	VPBROADCASTD expc<>+44(SB), Y2
	VPADDD Y2, Y1, Y1
	VPSLLD $23, Y1, Y1
	VMULPS Y1, Y3, Y3
	VMOVUPS Y3, (SI)
	VADDPS Y3, Y4, Y4
	ADDQ $32, SI
	SUBQ $8, CX
	JNZ  loop

done:
	VEXTRACTF128 $1, Y4, X0
	VADDPS X4, X0, X0
	VMOVHLPS X0, X0, X1
	VADDPS X1, X0, X0
	VMOVSHDUP X0, X1
	VADDSS X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET
