//go:build !purego

#include "textflag.h"

// AVX-VNNI kernel of the integer prefill, for CPUs with the VEX-encoded
// VPDPBUSD but no AVX-512 (Alder Lake and later Intel cores, Zen 5 client
// parts): q4i8x4vnni (kernels_int_vnni_amd64.s) instruction for
// instruction, ymm registers only, with VPDPBUSD in its VEX form (AVX_VNNI).
// Go's assembler writes VPDPBUSD only as EVEX (AVX512_VNNI + AVX512VL),
// so the four forms used are BYTEs; each is named below and matches what
// llvm-mc -mattr=+avxvnni writes for "{vex} vpdpbusd". Its results are the
// AVX2 kernel's bit for bit.

// VEX.256.66.0F38.W0 50 /r: C4, then ~R ~X ~B 00010 (ymm11..14 are rm, so
// ~B = 0: C2), W ~vvvv L pp = 0 0111 1 01 (vvvv = ymm8: 3D), opcode 50,
// ModRM 11 reg rm.
#define DPBUSD4 BYTE $0xC4; BYTE $0xC2; BYTE $0x3D; BYTE $0x50; BYTE $0xE3 // {vex} vpdpbusd ymm4, ymm8, ymm11
#define DPBUSD5 BYTE $0xC4; BYTE $0xC2; BYTE $0x3D; BYTE $0x50; BYTE $0xEC // {vex} vpdpbusd ymm5, ymm8, ymm12
#define DPBUSD6 BYTE $0xC4; BYTE $0xC2; BYTE $0x3D; BYTE $0x50; BYTE $0xF5 // {vex} vpdpbusd ymm6, ymm8, ymm13
#define DPBUSD7 BYTE $0xC4; BYTE $0xC2; BYTE $0x3D; BYTE $0x50; BYTE $0xFE // {vex} vpdpbusd ymm7, ymm8, ymm14

// D8STEP(w, x0, x1, x2, x3): the panel's 32 bytes at w(SI) (8 rows × 4
// weights, 0..15) against each quad row's 4 int8 at xr(BX), broadcast;
// each group of 4 products summed into the int32 lanes of Y4..Y7.
#define D8STEP(w, x0, x1, x2, x3) \
	VMOVDQU w(SI), Y8;          \
	VPBROADCASTD x0(BX), Y11;   \
	DPBUSD4;                    \
	VPBROADCASTD x1(BX), Y12;   \
	DPBUSD5;                    \
	VPBROADCASTD x2(BX), Y13;   \
	DPBUSD6;                    \
	VPBROADCASTD x3(BX), Y14;   \
	DPBUSD7

// D8SCALE(i, acc, d): acc += float(i)·(s·d), s in Y10, d the row's block
// scale at d(DX) (I8SCALE without the pair sum).
#define D8SCALE(i, acc, d) \
	VCVTDQ2PS i, i;            \
	VBROADCASTSS d(DX), Y11;   \
	VMULPS Y10, Y11, Y11;      \
	VFMADD231PS Y11, i, acc

// I8BIAS(acc, x): acc += b·xs, b in Y10, xs the row's group sum at x(R10).
#define I8BIAS(acc, x) \
	VBROADCASTSS x(R10), Y11; \
	VFMADD231PS Y11, Y10, acc

// func q4i8x4avxvnni(p *uint32, s, b *float32, xq *int8, d, xs *float32, groups, bpg int, c *float32, ldc int)
// The same block as q4i8x4.
TEXT ·q4i8x4avxvnni(SB), NOSPLIT, $0-80
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
	TESTQ CX, CX
	JZ   store

group:
	VMOVUPS (R8), Y10
	MOVQ R11, AX

blk:
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	D8STEP(0, 0, 4, 8, 12)
	D8STEP(32, 16, 20, 24, 28)
	D8STEP(64, 32, 36, 40, 44)
	D8STEP(96, 48, 52, 56, 60)
	D8STEP(128, 64, 68, 72, 76)
	D8STEP(160, 80, 84, 88, 92)
	D8STEP(192, 96, 100, 104, 108)
	D8STEP(224, 112, 116, 120, 124)
	D8SCALE(Y4, Y0, 0)
	D8SCALE(Y5, Y1, 4)
	D8SCALE(Y6, Y2, 8)
	D8SCALE(Y7, Y3, 12)
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
