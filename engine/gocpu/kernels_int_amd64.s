//go:build !purego

#include "textflag.h"

// AVX2 kernel of the integer prefill (layouts: intgemm.go; declaration:
// kernels_int_amd64.go).

// I8STEP(w, x0, x1, x2, x3): one step of 4 inputs: the panel's 32 bytes at
// w(SI) (8 rows × 4 weights, 0..15) against each quad row's 4 int8 at
// xr(BX), broadcast; pairs of products summed to int16 (|·| ≤ 2·15·127)
// and added into Y4..Y7.
#define I8STEP(w, x0, x1, x2, x3) \
	VMOVDQU w(SI), Y8;          \
	VPBROADCASTD x0(BX), Y11;   \
	VPMADDUBSW Y11, Y8, Y11;    \
	VPADDW Y11, Y4, Y4;         \
	VPBROADCASTD x1(BX), Y12;   \
	VPMADDUBSW Y12, Y8, Y12;    \
	VPADDW Y12, Y5, Y5;         \
	VPBROADCASTD x2(BX), Y13;   \
	VPMADDUBSW Y13, Y8, Y13;    \
	VPADDW Y13, Y6, Y6;         \
	VPBROADCASTD x3(BX), Y14;   \
	VPMADDUBSW Y14, Y8, Y14;    \
	VPADDW Y14, Y7, Y7

// I8FIRST: I8STEP(0, …) writing Y4..Y7 instead of adding.
#define I8FIRST \
	VMOVDQU (SI), Y8;          \
	VPBROADCASTD 0(BX), Y11;   \
	VPMADDUBSW Y11, Y8, Y4;    \
	VPBROADCASTD 4(BX), Y12;   \
	VPMADDUBSW Y12, Y8, Y5;    \
	VPBROADCASTD 8(BX), Y13;   \
	VPMADDUBSW Y13, Y8, Y6;    \
	VPBROADCASTD 12(BX), Y14;  \
	VPMADDUBSW Y14, Y8, Y7

// I8SCALE(i, acc, d): acc += float(Σ pairs of i)·(s·d), s in Y10, d the
// row's block scale at d(DX).
#define I8SCALE(i, acc, d) \
	VPMADDWD Y9, i, i;         \
	VCVTDQ2PS i, i;            \
	VBROADCASTSS d(DX), Y11;   \
	VMULPS Y10, Y11, Y11;      \
	VFMADD231PS Y11, i, acc

// I8BIAS(acc, x): acc += b·xs, b in Y10, xs the row's group sum at x(R10).
#define I8BIAS(acc, x) \
	VBROADCASTSS x(R10), Y11; \
	VFMADD231PS Y11, Y10, acc

// func q4i8x4(p *uint32, s, b *float32, xq *int8, d, xs *float32, groups, bpg int, c *float32, ldc int)
// c[r·ldc/4+j] for a quad of 4 input rows r and a panel of 8 weight rows j:
// per block of 32 inputs an exact integer sum scaled by s·d, per group the
// bias times the quantized group sum.
TEXT ·q4i8x4(SB), NOSPLIT, $0-80
	MOVQ p+0(FP), SI
	MOVQ s+8(FP), R8
	MOVQ b+16(FP), R9
	MOVQ xq+24(FP), BX
	MOVQ d+32(FP), DX
	MOVQ xs+40(FP), R10
	MOVQ groups+48(FP), CX
	MOVQ bpg+56(FP), R11
	MOVQ c+64(FP), DI
	MOVQ ldc+72(FP), R12
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVL $0x00010001, AX
	VMOVD AX, X9
	VPBROADCASTD X9, Y9
	TESTQ CX, CX
	JZ   store

group:
	VMOVUPS (R8), Y10
	MOVQ R11, AX

blk:
	I8FIRST
	I8STEP(32, 16, 20, 24, 28)
	I8STEP(64, 32, 36, 40, 44)
	I8STEP(96, 48, 52, 56, 60)
	I8STEP(128, 64, 68, 72, 76)
	I8STEP(160, 80, 84, 88, 92)
	I8STEP(192, 96, 100, 104, 108)
	I8STEP(224, 112, 116, 120, 124)
	I8SCALE(Y4, Y0, 0)
	I8SCALE(Y5, Y1, 4)
	I8SCALE(Y6, Y2, 8)
	I8SCALE(Y7, Y3, 12)
	ADDQ $256, SI
	ADDQ $128, BX
	ADDQ $16, DX
	DECQ AX
	JNZ  blk

	VMOVUPS (R9), Y10
	I8BIAS(Y0, 0)
	I8BIAS(Y1, 4)
	I8BIAS(Y2, 8)
	I8BIAS(Y3, 12)
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $16, R10
	DECQ CX
	JNZ  group

store:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, (DI)(R12*1)
	VMOVUPS Y2, (DI)(R12*2)
	ADDQ R12, DI
	VMOVUPS Y3, (DI)(R12*2)
	VZEROUPPER
	RET
