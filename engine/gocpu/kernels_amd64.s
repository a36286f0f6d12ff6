//go:build !purego

#include "textflag.h"

// AVX2/FMA inner loops for the Go backend; the Go declarations, layouts and
// portable twins are in kernels_amd64.go and kernels_generic.go.

// Nibble masks 0xF<<4k, k = 0..6 (nibble 7 is taken with a shift).
DATA q4mask<>+0(SB)/4, $0x0000000f
DATA q4mask<>+4(SB)/4, $0x000000f0
DATA q4mask<>+8(SB)/4, $0x00000f00
DATA q4mask<>+12(SB)/4, $0x0000f000
DATA q4mask<>+16(SB)/4, $0x000f0000
DATA q4mask<>+20(SB)/4, $0x00f00000
DATA q4mask<>+24(SB)/4, $0x0f000000
GLOBL q4mask<>(SB), RODATA|NOPTR, $28

#define Q4MASKS \
	VPBROADCASTD q4mask<>+0(SB), Y8;  \
	VPBROADCASTD q4mask<>+4(SB), Y9;  \
	VPBROADCASTD q4mask<>+8(SB), Y10; \
	VPBROADCASTD q4mask<>+12(SB), Y11; \
	VPBROADCASTD q4mask<>+16(SB), Y12; \
	VPBROADCASTD q4mask<>+20(SB), Y13; \
	VPBROADCASTD q4mask<>+24(SB), Y14

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

// AFFINE_TAIL adds Σ_g bias[g]*xs[g] (R9 biases of the row, advanced; R11
// xs; R12 groups) to Y15, reduces it and stores the result at DI.
#define AFFINE_TAIL \
	MOVQ R11, DX;            \
	MOVQ R12, BX;            \
bias8:                     \
	CMPQ BX, $8;             \
	JLT  bias1;              \
	VMOVUPS (R9), Y1;        \
	VFMADD231PS (DX), Y1, Y15; \
	ADDQ $32, R9;            \
	ADDQ $32, DX;            \
	SUBQ $8, BX;             \
	JMP  bias8;              \
bias1:                     \
	HSUM15;                  \
bias1loop:                 \
	TESTQ BX, BX;            \
	JZ   biasdone;           \
	VMOVSS (R9), X1;         \
	VFMADD231SS (DX), X1, X0; \
	ADDQ $4, R9;             \
	ADDQ $4, DX;             \
	DECQ BX;                 \
	JMP  bias1loop;          \
biasdone:                  \
	VMOVSS X0, (DI);         \
	ADDQ $4, DI

// G16STEP: one k step of the 6x16 outer product; b0/b1 address the 16 B
// values, off is the byte offset of a[i][k] past BX.
#define G16STEP(off, b0, b1) \
	VMOVUPS b0, Y12;                 \
	VMOVUPS b1, Y13;                 \
	VBROADCASTSS off(R8)(BX*1), Y14;  \
	VFMADD231PS Y12, Y14, Y0;        \
	VFMADD231PS Y13, Y14, Y1;        \
	VBROADCASTSS off(R9)(BX*1), Y15;  \
	VFMADD231PS Y12, Y15, Y2;        \
	VFMADD231PS Y13, Y15, Y3;        \
	VBROADCASTSS off(R10)(BX*1), Y14; \
	VFMADD231PS Y12, Y14, Y4;        \
	VFMADD231PS Y13, Y14, Y5;        \
	VBROADCASTSS off(R11)(BX*1), Y15; \
	VFMADD231PS Y12, Y15, Y6;        \
	VFMADD231PS Y13, Y15, Y7;        \
	VBROADCASTSS off(R12)(BX*1), Y14; \
	VFMADD231PS Y12, Y14, Y8;        \
	VFMADD231PS Y13, Y14, Y9;        \
	VBROADCASTSS off(R13)(BX*1), Y15; \
	VFMADD231PS Y12, Y15, Y10;       \
	VFMADD231PS Y13, Y15, Y11

// GEMM_ARGS loads the six A row pointers, B, its row stride, k and C.
#define GEMM_ARGS \
	MOVQ a+0(FP), AX;    \
	MOVQ 0(AX), R8;      \
	MOVQ 8(AX), R9;      \
	MOVQ 16(AX), R10;    \
	MOVQ 24(AX), R11;    \
	MOVQ 32(AX), R12;    \
	MOVQ 40(AX), R13;    \
	MOVQ b+8(FP), SI;    \
	MOVQ ldb+16(FP), DX; \
	MOVQ k+24(FP), CX;   \
	MOVQ c+32(FP), DI;   \
	XORQ BX, BX

// G8STEP: as G16STEP for 8 B values.
#define G8STEP(off, b0) \
	VMOVUPS b0, Y12;                 \
	VBROADCASTSS off(R8)(BX*1), Y14;  \
	VFMADD231PS Y12, Y14, Y0;        \
	VBROADCASTSS off(R9)(BX*1), Y15;  \
	VFMADD231PS Y12, Y15, Y1;        \
	VBROADCASTSS off(R10)(BX*1), Y14; \
	VFMADD231PS Y12, Y14, Y2;        \
	VBROADCASTSS off(R11)(BX*1), Y15; \
	VFMADD231PS Y12, Y15, Y3;        \
	VBROADCASTSS off(R12)(BX*1), Y14; \
	VFMADD231PS Y12, Y14, Y4;        \
	VBROADCASTSS off(R13)(BX*1), Y15; \
	VFMADD231PS Y12, Y15, Y5

// func q4dotG64(w *uint32, s, b, xp, xs, y *float32, n, groups, bpg int)
// For n consecutive rows of 4-bit weights with groups of bpg*64:
// y[r] = Σ_g s[r,g]·Σ_{k∈g} q[r,k]·x[k] + b[r,g]·xs[g].
TEXT ·q4dotG64(SB), NOSPLIT, $0-72
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
	MOVQ R12, BX

group:
	ZERO4
	MOVQ R13, AX

blk:
	Q4BLOCK
	ADDQ $32, SI
	ADDQ $256, DX
	DECQ AX
	JNZ  blk
	SUM4
	VBROADCASTSS (R8), Y1
	VFMADD231PS Y4, Y1, Y15
	ADDQ $4, R8
	DECQ BX
	JNZ  group

	AFFINE_TAIL
	DECQ CX
	JNZ  row

done:
	VZEROUPPER
	RET

// func q4dotG32(w *uint32, s, b, xp, xs, y *float32, n, groups int)
// As q4dotG64 for groups of 32: each 8-word block holds two groups (lanes
// 0-3 and 4-7), scaled by a blend of the two scales.
TEXT ·q4dotG32(SB), NOSPLIT, $0-64
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
	MOVQ R13, BX

blk:
	ZERO4
	Q4BLOCK
	ADDQ $32, SI
	ADDQ $256, DX
	SUM4
	VBROADCASTSS (R8), Y1
	VBROADCASTSS 4(R8), Y2
	VBLENDPS $0xF0, Y2, Y1, Y1
	VFMADD231PS Y4, Y1, Y15
	ADDQ $8, R8
	DECQ BX
	JNZ  blk

	AFFINE_TAIL
	DECQ CX
	JNZ  row

done:
	VZEROUPPER
	RET

// func q8dot(w *uint32, s, b, x, xs, y *float32, n, groups, bpg int)
// For n consecutive rows of 8-bit weights with groups of bpg*32, x in
// natural order: y[r] = Σ_g s[r,g]·Σ_{k∈g} q[r,k]·x[k] + b[r,g]·xs[g].
TEXT ·q8dot(SB), NOSPLIT, $0-72
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
	MOVQ R12, BX

group:
	ZERO4
	MOVQ R13, AX

blk:
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
	VBROADCASTSS (R8), Y1
	VFMADD231PS Y4, Y1, Y15
	ADDQ $4, R8
	DECQ BX
	JNZ  group

	AFFINE_TAIL
	DECQ CX
	JNZ  row

done:
	VZEROUPPER
	RET

// func deq4(w *uint32, s, b, out *float32, nblk, gshift int)
// Dequantizes nblk 8-word blocks of one 4-bit row into out, permuted:
// out[64j+8k+i] = float32(nibble k of word 8j+i)*s[g] + b[g] with
// g = (64j+8i)/gs and gs = 32<<gshift (multiply, then add: as the plain path).
TEXT ·deq4(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ s+8(FP), R8
	MOVQ b+16(FP), R9
	MOVQ out+24(FP), DI
	MOVQ nblk+32(FP), BX
	MOVQ gshift+40(FP), CX
	TESTQ BX, BX
	JZ   done
	VPBROADCASTD q4mask<>+0(SB), Y15
	XORQ AX, AX

loop:
	MOVQ AX, DX
	SHRQ CX, DX
	LEAQ 1(AX), R10
	SHRQ CX, R10
	VBROADCASTSS (R8)(DX*4), Y12
	VBROADCASTSS (R8)(R10*4), Y14
	VBLENDPS $0xF0, Y14, Y12, Y12
	VBROADCASTSS (R9)(DX*4), Y13
	VBROADCASTSS (R9)(R10*4), Y14
	VBLENDPS $0xF0, Y14, Y13, Y13
	VMOVDQU (SI), Y0

	VPAND Y15, Y0, Y1
	VCVTDQ2PS Y1, Y1
	VMULPS Y12, Y1, Y1
	VADDPS Y13, Y1, Y1
	VMOVUPS Y1, (DI)
	VPSRLD $4, Y0, Y2
	VPAND Y15, Y2, Y2
	VCVTDQ2PS Y2, Y2
	VMULPS Y12, Y2, Y2
	VADDPS Y13, Y2, Y2
	VMOVUPS Y2, 32(DI)
	VPSRLD $8, Y0, Y3
	VPAND Y15, Y3, Y3
	VCVTDQ2PS Y3, Y3
	VMULPS Y12, Y3, Y3
	VADDPS Y13, Y3, Y3
	VMOVUPS Y3, 64(DI)
	VPSRLD $12, Y0, Y4
	VPAND Y15, Y4, Y4
	VCVTDQ2PS Y4, Y4
	VMULPS Y12, Y4, Y4
	VADDPS Y13, Y4, Y4
	VMOVUPS Y4, 96(DI)
	VPSRLD $16, Y0, Y5
	VPAND Y15, Y5, Y5
	VCVTDQ2PS Y5, Y5
	VMULPS Y12, Y5, Y5
	VADDPS Y13, Y5, Y5
	VMOVUPS Y5, 128(DI)
	VPSRLD $20, Y0, Y6
	VPAND Y15, Y6, Y6
	VCVTDQ2PS Y6, Y6
	VMULPS Y12, Y6, Y6
	VADDPS Y13, Y6, Y6
	VMOVUPS Y6, 160(DI)
	VPSRLD $24, Y0, Y7
	VPAND Y15, Y7, Y7
	VCVTDQ2PS Y7, Y7
	VMULPS Y12, Y7, Y7
	VADDPS Y13, Y7, Y7
	VMOVUPS Y7, 192(DI)
	VPSRLD $28, Y0, Y1
	VCVTDQ2PS Y1, Y1
	VMULPS Y12, Y1, Y1
	VADDPS Y13, Y1, Y1
	VMOVUPS Y1, 224(DI)

	ADDQ $32, SI
	ADDQ $256, DI
	ADDQ $2, AX
	DECQ BX
	JNZ  loop

done:
	VZEROUPPER
	RET

// func deq8(w *uint32, s, b, out *float32, groups, cpg int)
// Dequantizes groups groups of cpg*8 bytes of one 8-bit row into out in
// natural order: out[k] = float32(q[k])*s[g] + b[g].
TEXT ·deq8(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ s+8(FP), R8
	MOVQ b+16(FP), R9
	MOVQ out+24(FP), DI
	MOVQ groups+32(FP), CX
	MOVQ cpg+40(FP), R10
	TESTQ CX, CX
	JZ   done

group:
	VBROADCASTSS (R8), Y12
	VBROADCASTSS (R9), Y13
	ADDQ $4, R8
	ADDQ $4, R9
	MOVQ R10, AX

chunk:
	VPMOVZXBD (SI), Y0
	VCVTDQ2PS Y0, Y0
	VMULPS Y12, Y0, Y0
	VADDPS Y13, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $8, SI
	ADDQ $32, DI
	DECQ AX
	JNZ  chunk
	DECQ CX
	JNZ  group

done:
	VZEROUPPER
	RET

// func gemm6x16(a *[6]*float32, b *float32, ldb, k int, c *float32)
// c[32i+j] = Σ_{p<k} a[i][p]·b[p·ldb/4+j] for i < 6, j < 16 (ldb in bytes).
TEXT ·gemm6x16(SB), NOSPLIT, $0-40
	GEMM_ARGS
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

loop2:
	CMPQ CX, $2
	JLT  tail
	G16STEP(0, (SI), 32(SI))
	G16STEP(4, (SI)(DX*1), 32(SI)(DX*1))
	ADDQ $8, BX
	LEAQ (SI)(DX*2), SI
	SUBQ $2, CX
	JMP  loop2

tail:
	TESTQ CX, CX
	JZ   store
	G16STEP(0, (SI), 32(SI))

store:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 128(DI)
	VMOVUPS Y3, 160(DI)
	VMOVUPS Y4, 256(DI)
	VMOVUPS Y5, 288(DI)
	VMOVUPS Y6, 384(DI)
	VMOVUPS Y7, 416(DI)
	VMOVUPS Y8, 512(DI)
	VMOVUPS Y9, 544(DI)
	VMOVUPS Y10, 640(DI)
	VMOVUPS Y11, 672(DI)
	VZEROUPPER
	RET

// func gemm6x8(a *[6]*float32, b *float32, ldb, k int, c *float32)
// As gemm6x16 for 8 columns.
TEXT ·gemm6x8(SB), NOSPLIT, $0-40
	GEMM_ARGS
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5

loop4:
	CMPQ CX, $4
	JLT  loop1
	G8STEP(0, (SI))
	G8STEP(4, (SI)(DX*1))
	LEAQ (SI)(DX*2), SI
	G8STEP(8, (SI))
	G8STEP(12, (SI)(DX*1))
	LEAQ (SI)(DX*2), SI
	ADDQ $16, BX
	SUBQ $4, CX
	JMP  loop4

loop1:
	TESTQ CX, CX
	JZ   store
	G8STEP(0, (SI))
	ADDQ $4, BX
	ADDQ DX, SI
	DECQ CX
	JMP  loop1

store:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 128(DI)
	VMOVUPS Y2, 256(DI)
	VMOVUPS Y3, 384(DI)
	VMOVUPS Y4, 512(DI)
	VMOVUPS Y5, 640(DI)
	VZEROUPPER
	RET

// func dotRows(w, x, y *float32, n, k int)
// y[r] = Σ_{p<k} w[r·k+p]·x[p] for n consecutive rows of w.
TEXT ·dotRows(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), R10
	MOVQ y+16(FP), DI
	MOVQ n+24(FP), CX
	MOVQ k+32(FP), R11
	TESTQ CX, CX
	JZ   done

row:
	ZERO4
	MOVQ R10, DX
	MOVQ R11, AX

loop32:
	CMPQ AX, $32
	JLT  loop8
	VMOVUPS (DX), Y0
	VFMADD231PS (SI), Y0, Y4
	VMOVUPS 32(DX), Y1
	VFMADD231PS 32(SI), Y1, Y5
	VMOVUPS 64(DX), Y2
	VFMADD231PS 64(SI), Y2, Y6
	VMOVUPS 96(DX), Y3
	VFMADD231PS 96(SI), Y3, Y7
	ADDQ $128, DX
	ADDQ $128, SI
	SUBQ $32, AX
	JMP  loop32

loop8:
	CMPQ AX, $8
	JLT  reduce
	VMOVUPS (DX), Y0
	VFMADD231PS (SI), Y0, Y4
	ADDQ $32, DX
	ADDQ $32, SI
	SUBQ $8, AX
	JMP  loop8

reduce:
	SUM4
	VMOVAPS Y4, Y15
	HSUM15

loop1:
	TESTQ AX, AX
	JZ   store
	VMOVSS (DX), X1
	VFMADD231SS (SI), X1, X0
	ADDQ $4, DX
	ADDQ $4, SI
	DECQ AX
	JMP  loop1

store:
	VMOVSS X0, (DI)
	ADDQ $4, DI
	DECQ CX
	JNZ  row

done:
	VZEROUPPER
	RET

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
