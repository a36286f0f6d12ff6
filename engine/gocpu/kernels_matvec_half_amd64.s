//go:build !purego

#include "textflag.h"

// The AVX2 4/8-bit matvecs of kernels_matvec_amd64.s for 2-byte (bfloat16)
// scales and biases, read and widened in place (declarations:
// kernels_half_amd64.go). Only the scale and bias loads differ.

// AFFINE_TAIL_H is AFFINE_TAIL with bfloat16 biases at R9.
#define AFFINE_TAIL_H \
	MOVQ R11, DX;            \
	MOVQ R12, BX;            \
bias8:                     \
	CMPQ BX, $8;             \
	JLT  bias1;              \
	VPMOVZXWD (R9), Y1;      \
	VPSLLD $16, Y1, Y1;      \
	VFMADD231PS (DX), Y1, Y15; \
	ADDQ $16, R9;            \
	ADDQ $32, DX;            \
	SUBQ $8, BX;             \
	JMP  bias8;              \
bias1:                     \
	HSUM15;                  \
bias1loop:                 \
	TESTQ BX, BX;            \
	JZ   biasdone;           \
	MOVWLZX (R9), AX;        \
	SHLL $16, AX;            \
	VMOVD AX, X1;            \
	VFMADD231SS (DX), X1, X0; \
	ADDQ $2, R9;             \
	ADDQ $4, DX;             \
	DECQ BX;                 \
	JMP  bias1loop;          \
biasdone:                  \
	VMOVSS X0, (DI);         \
	ADDQ $4, DI

// BF16AT(off, x, y): y = the bfloat16 at off(R8) broadcast (AX, x scratch).
#define BF16AT(off, x, y) \
	MOVWLZX off(R8), AX; \
	SHLL $16, AX;        \
	VMOVD AX, x;         \
	VBROADCASTSS x, y

// Nibble masks 0xF<<4k, k = 0..6 (nibble 7 is taken with a shift).
DATA q4maskh<>+0(SB)/4, $0x0000000f
DATA q4maskh<>+4(SB)/4, $0x000000f0
DATA q4maskh<>+8(SB)/4, $0x00000f00
DATA q4maskh<>+12(SB)/4, $0x0000f000
DATA q4maskh<>+16(SB)/4, $0x000f0000
DATA q4maskh<>+20(SB)/4, $0x00f00000
DATA q4maskh<>+24(SB)/4, $0x0f000000
GLOBL q4maskh<>(SB), RODATA|NOPTR, $28

#define Q4MASKS \
	VPBROADCASTD q4maskh<>+0(SB), Y8;  \
	VPBROADCASTD q4maskh<>+4(SB), Y9;  \
	VPBROADCASTD q4maskh<>+8(SB), Y10; \
	VPBROADCASTD q4maskh<>+12(SB), Y11; \
	VPBROADCASTD q4maskh<>+16(SB), Y12; \
	VPBROADCASTD q4maskh<>+20(SB), Y13; \
	VPBROADCASTD q4maskh<>+24(SB), Y14

// Q4BLOCK: 8 words at SI (64 nibbles) against 64 permuted, pre-scaled x at
// DX. Nibble k of lane i is masked in place (not shifted): it converts to
// q*2^(4k) exactly and meets x[8i+k]*2^(-4k), so the product is q*x.
#define Q4BLOCK \
	VMOVDQU (SI), Y0;            \
	VPAND Y8, Y0, Y1;            \
	VCVTDQ2PS Y1, Y1;            \
	VFMADD231PS (DX), Y1, Y4;    \
	VPAND Y9, Y0, Y2;            \
	VCVTDQ2PS Y2, Y2;            \
	VFMADD231PS 32(DX), Y2, Y5;  \
	VPAND Y10, Y0, Y3;           \
	VCVTDQ2PS Y3, Y3;            \
	VFMADD231PS 64(DX), Y3, Y6;  \
	VPAND Y11, Y0, Y1;           \
	VCVTDQ2PS Y1, Y1;            \
	VFMADD231PS 96(DX), Y1, Y7;  \
	VPAND Y12, Y0, Y2;           \
	VCVTDQ2PS Y2, Y2;            \
	VFMADD231PS 128(DX), Y2, Y4; \
	VPAND Y13, Y0, Y3;           \
	VCVTDQ2PS Y3, Y3;            \
	VFMADD231PS 160(DX), Y3, Y5; \
	VPAND Y14, Y0, Y1;           \
	VCVTDQ2PS Y1, Y1;            \
	VFMADD231PS 192(DX), Y1, Y6; \
	VPSRLD $28, Y0, Y2;          \
	VCVTDQ2PS Y2, Y2;            \
	VFMADD231PS 224(DX), Y2, Y7

#define ZERO4 \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7

#define SUM4 \
	VADDPS Y5, Y4, Y4; \
	VADDPS Y7, Y6, Y6; \
	VADDPS Y6, Y4, Y4

// HSUM15: X0 = sum of the 8 lanes of Y15.
#define HSUM15 \
	VEXTRACTF128 $1, Y15, X0; \
	VADDPS X15, X0, X0;       \
	VMOVHLPS X0, X0, X1;      \
	VADDPS X1, X0, X0;        \
	VMOVSHDUP X0, X1;         \
	VADDSS X1, X0, X0


// G16STEP: one k step of the 6x16 outer product; b0/b1 address the 16 B
// values, off is the byte offset of a[i][k] past BX.
// func q4dotG64H(w *uint32, s, b *uint16, xp, xs, y *float32, n, groups, bpg int)
// For n consecutive rows of 4-bit weights with groups of bpg*64:
// y[r] = Σ_g s[r,g]·Σ_{k∈g} q[r,k]·x[k] + b[r,g]·xs[g].
TEXT ·q4dotG64H(SB), NOSPLIT, $0-72
	MOVQ w+0(FP), SI
	MOVQ s+8(FP), R8
	MOVQ b+16(FP), R9
	MOVQ xp+24(FP), R10
	MOVQ xs+32(FP), R11
	MOVQ y+40(FP), DI
	MOVQ n+48(FP), CX
	MOVQ groups+56(FP), R12
	MOVQ bpg+64(FP), R13
	TESTQ CX, CX
	JZ   done
	Q4MASKS

row:
	VXORPS Y15, Y15, Y15
	MOVQ R10, DX
	PREFETCHT0 512(R8)
	PREFETCHT0 512(R9)
	MOVQ R12, BX

group:
	ZERO4
	MOVQ R13, AX

blk:
	PREFETCHT0 4096(SI) // weights stream from memory: ask ahead
	Q4BLOCK
	ADDQ $32, SI
	ADDQ $256, DX
	DECQ AX
	JNZ  blk
	SUM4
	BF16AT(0, X1, Y1)
	VFMADD231PS Y4, Y1, Y15
	ADDQ $2, R8
	DECQ BX
	JNZ  group

	AFFINE_TAIL_H
	DECQ CX
	JNZ  row

done:
	VZEROUPPER
	RET


// func q4dotG32H(w *uint32, s, b *uint16, xp, xs, y *float32, n, groups int)
// As q4dotG64 for groups of 32: each 8-word block holds two groups (lanes
// 0-3 and 4-7), scaled by a blend of the two scales.
TEXT ·q4dotG32H(SB), NOSPLIT, $0-64
	MOVQ w+0(FP), SI
	MOVQ s+8(FP), R8
	MOVQ b+16(FP), R9
	MOVQ xp+24(FP), R10
	MOVQ xs+32(FP), R11
	MOVQ y+40(FP), DI
	MOVQ n+48(FP), CX
	MOVQ groups+56(FP), R12
	TESTQ CX, CX
	JZ   done
	Q4MASKS
	MOVQ R12, R13
	SHRQ $1, R13

row:
	VXORPS Y15, Y15, Y15
	MOVQ R10, DX
	PREFETCHT0 512(R8)
	PREFETCHT0 512(R9)
	MOVQ R13, BX

blk:
	ZERO4
	PREFETCHT0 4096(SI)
	Q4BLOCK
	ADDQ $32, SI
	ADDQ $256, DX
	SUM4
	BF16AT(0, X1, Y1)
	BF16AT(2, X2, Y2)
	VBLENDPS $0xF0, Y2, Y1, Y1
	VFMADD231PS Y4, Y1, Y15
	ADDQ $4, R8
	DECQ BX
	JNZ  blk

	AFFINE_TAIL_H
	DECQ CX
	JNZ  row

done:
	VZEROUPPER
	RET


// func q8dotH(w *uint32, s, b *uint16, x, xs, y *float32, n, groups, bpg int)
// For n consecutive rows of 8-bit weights with groups of bpg*32, x in
// natural order: y[r] = Σ_g s[r,g]·Σ_{k∈g} q[r,k]·x[k] + b[r,g]·xs[g].
TEXT ·q8dotH(SB), NOSPLIT, $0-72
	MOVQ w+0(FP), SI
	MOVQ s+8(FP), R8
	MOVQ b+16(FP), R9
	MOVQ x+24(FP), R10
	MOVQ xs+32(FP), R11
	MOVQ y+40(FP), DI
	MOVQ n+48(FP), CX
	MOVQ groups+56(FP), R12
	MOVQ bpg+64(FP), R13
	TESTQ CX, CX
	JZ   done

row:
	VXORPS Y15, Y15, Y15
	MOVQ R10, DX
	PREFETCHT0 512(R8)
	PREFETCHT0 512(R9)
	MOVQ R12, BX

group:
	ZERO4
	MOVQ R13, AX

blk:
	PREFETCHT0 4096(SI)
	VPMOVZXBD (SI), Y0
	VCVTDQ2PS Y0, Y0
	VFMADD231PS (DX), Y0, Y4
	VPMOVZXBD 8(SI), Y1
	VCVTDQ2PS Y1, Y1
	VFMADD231PS 32(DX), Y1, Y5
	VPMOVZXBD 16(SI), Y2
	VCVTDQ2PS Y2, Y2
	VFMADD231PS 64(DX), Y2, Y6
	VPMOVZXBD 24(SI), Y3
	VCVTDQ2PS Y3, Y3
	VFMADD231PS 96(DX), Y3, Y7
	ADDQ $32, SI
	ADDQ $128, DX
	DECQ AX
	JNZ  blk
	SUM4
	BF16AT(0, X1, Y1)
	VFMADD231PS Y4, Y1, Y15
	ADDQ $2, R8
	DECQ BX
	JNZ  group

	AFFINE_TAIL_H
	DECQ CX
	JNZ  row

done:
	VZEROUPPER
	RET

