//go:build !purego

#include "textflag.h"

// AVX-512 (F, BW, VL) quantizer of the integer decode: quantizeVecGo's
// blocks, scales and group sums (intdot.go) in vector registers, the same
// values bit for bit (declaration: kernels_intdot_amd64.go).

DATA i8q<>+0(SB)/4, $0x7fffffff  // |·| mask
DATA i8q<>+4(SB)/4, $0x3f000000  // 0.5
DATA i8q<>+8(SB)/4, $0x42fe0000  // 127
DATA i8q<>+12(SB)/4, $0x7fc00000 // NaN
DATA i8q<>+16(SB)/4, $0
DATA i8q<>+20(SB)/4, $2
DATA i8q<>+24(SB)/4, $4
DATA i8q<>+28(SB)/4, $6
DATA i8q<>+32(SB)/4, $8
DATA i8q<>+36(SB)/4, $10
DATA i8q<>+40(SB)/4, $12
DATA i8q<>+44(SB)/4, $14
DATA i8q<>+48(SB)/4, $16
DATA i8q<>+52(SB)/4, $18
DATA i8q<>+56(SB)/4, $20
DATA i8q<>+60(SB)/4, $22
DATA i8q<>+64(SB)/4, $24
DATA i8q<>+68(SB)/4, $26
DATA i8q<>+72(SB)/4, $28
DATA i8q<>+76(SB)/4, $30
GLOBL i8q<>(SB), RODATA|NOPTR, $80

#include "kernels_intdot_amd64.h"

// QROUND(z): z = roundAway(z·id) as int32 (id in Z7, |·| mask Z20, 0.5
// Z21, zero Z22): |z·id| + 0.5 truncated, negated where z·id < 0.
#define QROUND(z, t) \
	VMULPS Z7, z, z;           \
	VANDPS Z20, z, t;          \
	VADDPS Z21, t, t;          \
	VCVTTPS2DQ t, t;           \
	VCMPPS $1, Z22, z, K5;     \
	VPSUBD t, Z22, K5, t;      \
	VMOVDQA32 t, z

// func quantizeVec512(x *float32, xq *int8, dl, xs *float32, K, shift int)
// Blocks of 32 in order; block k0/32 of chunk c = k0 &^ 127 (half = 64, or
// 32 for a last chunk of 64) writes its even inputs' bytes at c+16b and
// its odd ones' at c+16b+half (b = k0/32 % 4), its d on lanes k0/8..+3 of
// dl, and adds d·Σxi to xs[(k0/32)>>shift] (xs zeroed by the caller).
TEXT ·quantizeVec512(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ xq+8(FP), DI
	MOVQ dl+16(FP), R8
	MOVQ xs+24(FP), R9
	MOVQ K+32(FP), R10
	MOVQ shift+40(FP), CX
	VPBROADCASTD i8q<>+0(SB), Z20
	VPBROADCASTD i8q<>+4(SB), Z21
	VPXORD Z22, Z22, Z22
	VMOVDQU32 i8q<>+16(SB), Z23 // even indices 0, 2, …, 30
	MOVL $1, AX
	VPBROADCASTD AX, Z24
	VPADDD Z24, Z23, Z24        // odd ones
	VMOVSS i8q<>+8(SB), X11     // 127
	XORQ R12, R12               // k0

block:
	CMPQ R12, R10
	JGE  done
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	// amax: the largest |x| bit pattern (the order of non-negative floats,
	// NaN above +Inf above every finite value)
	VPANDD Z20, Z0, Z2
	VPANDD Z20, Z1, Z3
	VPMAXUD Z3, Z2, Z2
	VEXTRACTI64X4 $1, Z2, Y3
	VPMAXUD Y3, Y2, Y2
	VEXTRACTI128 $1, Y2, X3
	VPMAXUD X3, X2, X2
	VMOVDQA X2, X4
	QREDUCE(VPMAXUD, X4, X3)
	QSCALE
	VBROADCASTSS X7, Z7
	QROUND(Z0, Z2)
	QROUND(Z1, Z3)
	VMOVDQA32 Z0, Z2
	VPERMT2D Z1, Z23, Z2        // even inputs
	VPERMT2D Z1, Z24, Z0        // odd inputs
	VPADDD Z2, Z0, Z1
	VEXTRACTI64X4 $1, Z1, Y3
	VPADDD Y3, Y1, Y1
	VEXTRACTI128 $1, Y1, X3
	VPADDD X3, X1, X1
	QREDUCE(VPADDD, X1, X3)
	VCVTDQ2PS X1, X8            // Σxi, exact
	VMULSS X6, X8, X8           // d·Σxi
	JMP  store

nonfinite:
	VMOVSS i8q<>+12(SB), X6     // d = NaN, every xi 0
	VPXORD Z2, Z2, Z2
	VPXORD Z0, Z0, Z0
	VMULSS X22, X6, X8          // NaN·0

store:
	QOFFSETS
	VPMOVDB Z2, (DI)(BX*1)
	ADDQ DX, BX
	VPMOVDB Z0, (DI)(BX*1)
	QNEXT

done:
	VZEROUPPER
	RET
