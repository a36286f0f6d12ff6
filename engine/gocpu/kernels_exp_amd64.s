//go:build !purego

#include "textflag.h"

// AVX2/FMA exponential for the fast SDPA softmax (declaration:
// kernels_amd64.go).

// Constants of exp4 (float64 bits).
DATA expd<>+0(SB)/8, $0xc05a000000000000   // -104: exp rounds to float32 0 below
DATA expd<>+8(SB)/8, $0x3ff71547652b82fe   // log2(e)
DATA expd<>+16(SB)/8, $0xbfe62e42fee00000  // -ln2, high 32 bits (n·ln2hi is exact)
DATA expd<>+24(SB)/8, $0xbdea39ef35793c76  // -ln2, the rest
DATA expd<>+32(SB)/8, $0x3ff0000000000000  // 1/k!, k = 0..11
DATA expd<>+40(SB)/8, $0x3ff0000000000000
DATA expd<>+48(SB)/8, $0x3fe0000000000000
DATA expd<>+56(SB)/8, $0x3fc5555555555555
DATA expd<>+64(SB)/8, $0x3fa5555555555555
DATA expd<>+72(SB)/8, $0x3f81111111111111
DATA expd<>+80(SB)/8, $0x3f56c16c16c16c17
DATA expd<>+88(SB)/8, $0x3f2a01a01a01a01a
DATA expd<>+96(SB)/8, $0x3efa01a01a01a01a
DATA expd<>+104(SB)/8, $0x3ec71de3a556c734
DATA expd<>+112(SB)/8, $0x3e927e4fb7789f5c
DATA expd<>+120(SB)/8, $0x3e5ae64567f544e4
DATA expd<>+128(SB)/4, $1023
GLOBL expd<>(SB), RODATA|NOPTR, $132

// func exp4(v *float32, n int, m float32)
// v[i] = float32(exp(float64(v[i] - m))) for i < n (n%4 == 0), as the plain
// path's softmax rounds it: in float64, exp(r + k·ln2) = 2^k·Σ_{j≤11} r^j/j!
// with |r| ≤ ln2/2 (relative error ~1e-15), then rounded once to float32.
// -Inf gives 0 and NaN stays NaN.
TEXT ·exp4(SB), NOSPLIT, $0-20
	MOVQ v+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSD expd<>+32(SB), Y4
	VBROADCASTSD expd<>+40(SB), Y5
	VBROADCASTSD expd<>+48(SB), Y6
	VBROADCASTSD expd<>+56(SB), Y7
	VBROADCASTSD expd<>+64(SB), Y8
	VBROADCASTSD expd<>+72(SB), Y9
	VBROADCASTSD expd<>+80(SB), Y10
	VBROADCASTSD expd<>+88(SB), Y11
	VBROADCASTSD expd<>+96(SB), Y12
	VBROADCASTSD expd<>+104(SB), Y13
	VBROADCASTSD expd<>+112(SB), Y14
	VBROADCASTSD expd<>+120(SB), Y15
	TESTQ CX, CX
	JZ   done

loop:
	VMOVUPS (SI), X0
	VBROADCASTSS m+16(FP), X1
	VSUBPS X1, X0, X0           // x - m in float32, as the plain path
	VCVTPS2PD X0, Y0
	VBROADCASTSD expd<>+0(SB), Y1
	VMAXPD Y0, Y1, Y0           // max(-104, x); a NaN x stays NaN
	VBROADCASTSD expd<>+8(SB), Y1
	VMULPD Y1, Y0, Y1
	VROUNDPD $0, Y1, Y1         // k
	VBROADCASTSD expd<>+16(SB), Y3
	VFMADD231PD Y3, Y1, Y0
	VBROADCASTSD expd<>+24(SB), Y3
	VFMADD231PD Y3, Y1, Y0      // r = x - k·ln2
	VMOVAPD Y15, Y2
	VFMADD213PD Y14, Y0, Y2
	VFMADD213PD Y13, Y0, Y2
	VFMADD213PD Y12, Y0, Y2
	VFMADD213PD Y11, Y0, Y2
	VFMADD213PD Y10, Y0, Y2
	VFMADD213PD Y9, Y0, Y2
	VFMADD213PD Y8, Y0, Y2
	VFMADD213PD Y7, Y0, Y2
	VFMADD213PD Y6, Y0, Y2
	VFMADD213PD Y5, Y0, Y2
	VFMADD213PD Y4, Y0, Y2      // Σ r^j/j!
	VCVTPD2DQY Y1, X1
	VPBROADCASTD expd<>+128(SB), X3
	VPADDD X3, X1, X1
	VPMOVZXDQ X1, Y1
	VPSLLQ $52, Y1, Y1          // 2^k
	VMULPD Y1, Y2, Y2
	VCVTPD2PSY Y2, X2
	VMOVUPS X2, (SI)
	ADDQ $16, SI
	SUBQ $4, CX
	JNZ  loop

done:
	VZEROUPPER
	RET
