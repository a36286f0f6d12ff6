//go:build !purego

#include "textflag.h"

// AVX-512 versions of the matvec and GEMM inner loops: the AVX2 loops of
// kernels_matvec_amd64.s and kernels_gemm_amd64.s on 16 lanes (declarations
// in kernels_avx512_amd64.go).

#include "kernels_amd64.h"

// Z32STEP: one k step of the 6×32 outer product (see G16STEP).
#define Z32STEP(off, b0, b1) \
	VMOVUPS b0, Z12;                 \
	VMOVUPS b1, Z13;                 \
	VBROADCASTSS off(R8)(BX*1), Z14;  \
	VFMADD231PS Z12, Z14, Z0;        \
	VFMADD231PS Z13, Z14, Z1;        \
	VBROADCASTSS off(R9)(BX*1), Z15;  \
	VFMADD231PS Z12, Z15, Z2;        \
	VFMADD231PS Z13, Z15, Z3;        \
	VBROADCASTSS off(R10)(BX*1), Z16; \
	VFMADD231PS Z12, Z16, Z4;        \
	VFMADD231PS Z13, Z16, Z5;        \
	VBROADCASTSS off(R11)(BX*1), Z17; \
	VFMADD231PS Z12, Z17, Z6;        \
	VFMADD231PS Z13, Z17, Z7;        \
	VBROADCASTSS off(R12)(BX*1), Z18; \
	VFMADD231PS Z12, Z18, Z8;        \
	VFMADD231PS Z13, Z18, Z9;        \
	VBROADCASTSS off(R13)(BX*1), Z19; \
	VFMADD231PS Z12, Z19, Z10;       \
	VFMADD231PS Z13, Z19, Z11

// Z16STEP: one k step of the 6×16 outer product.
#define Z16STEP(off, b0) \
	VMOVUPS b0, Z12;                 \
	VBROADCASTSS off(R8)(BX*1), Z14;  \
	VFMADD231PS Z12, Z14, Z0;        \
	VBROADCASTSS off(R9)(BX*1), Z15;  \
	VFMADD231PS Z12, Z15, Z1;        \
	VBROADCASTSS off(R10)(BX*1), Z16; \
	VFMADD231PS Z12, Z16, Z2;        \
	VBROADCASTSS off(R11)(BX*1), Z17; \
	VFMADD231PS Z12, Z17, Z3;        \
	VBROADCASTSS off(R12)(BX*1), Z18; \
	VFMADD231PS Z12, Z18, Z4;        \
	VBROADCASTSS off(R13)(BX*1), Z19; \
	VFMADD231PS Z12, Z19, Z5

#define GEMM_ARGS512 \
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

// func q4dot512G(w *uint32, s, b, xp, xs, y *float32, n, groups, bpg int)
// q4dot for groups of bpg*128 (x permuted with 16 lanes).
TEXT ·q4dot512G(SB), NOSPLIT, $0-72
	Q4ARGS
	MOVQ bpg+64(FP), R13
	TAILMASK
	MOVQ n+48(FP), CX
	TESTQ CX, CX
	JZ   done
	Q4MASKS512

row:
	VPXORD Z15, Z15, Z15
	MOVQ R10, DX
	MOVQ R12, BX
	PREFETCHT0 512(R8)
	PREFETCHT0 512(R9)

group:
	ZERO4Z
	MOVQ R13, AX

blk:
	PREFETCHT0 4096(SI) // weights stream from memory: ask ahead
	Q4BLOCK512
	ADDQ $64, SI
	ADDQ $512, DX
	DECQ AX
	JNZ  blk
	SUM4Z
	VBROADCASTSS (R8), Z1
	VFMADD231PS Z4, Z1, Z15
	ADDQ $4, R8
	DECQ BX
	JNZ  group

	AFFINE_TAIL512
	DECQ CX
	JNZ  row

done:
	VZEROUPPER
	RET

// func q4dot512S(w *uint32, s, b, xp, xs, y *float32, n, groups, gpb, nblk int, idx *int32)
// q4dot for groups of 128/gpb (gpb 2 or 4 groups per 16-word block, nblk
// blocks per row): the block's gpb scales are loaded under mask K1 and
// spread over their lanes by idx (lane i takes scale i·gpb/16).
TEXT ·q4dot512S(SB), NOSPLIT, $0-88
	Q4ARGS
	MOVQ nblk+72(FP), R14
	MOVQ idx+80(FP), AX
	VMOVDQU32 (AX), Z21
	MOVQ gpb+64(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1
	LEAQ 0(CX*4), R13
	TAILMASK
	MOVQ n+48(FP), CX
	TESTQ CX, CX
	JZ   done
	Q4MASKS512

row:
	VPXORD Z15, Z15, Z15
	MOVQ R10, DX
	MOVQ R14, BX
	PREFETCHT0 512(R8)
	PREFETCHT0 512(R9)

blk:
	ZERO4Z
	PREFETCHT0 4096(SI)
	Q4BLOCK512
	ADDQ $64, SI
	ADDQ $512, DX
	SUM4Z
	VMOVUPS.Z (R8), K1, Z1
	VPERMPS Z1, Z21, Z1
	VFMADD231PS Z4, Z1, Z15
	ADDQ R13, R8
	DECQ BX
	JNZ  blk

	AFFINE_TAIL512
	DECQ CX
	JNZ  row

done:
	VZEROUPPER
	RET

// func q8dot512(w *uint32, s, b, x, xs, y *float32, n, groups, bpg int)
// q8dot on 16 lanes: groups of bpg*32, x in natural order.
TEXT ·q8dot512(SB), NOSPLIT, $0-72
	MOVQ w+0(FP), SI
	MOVQ s+8(FP), R8
	MOVQ b+16(FP), R9
	MOVQ x+24(FP), R10
	MOVQ xs+32(FP), R11
	MOVQ y+40(FP), DI
	MOVQ groups+56(FP), R12
	MOVQ bpg+64(FP), R13
	TAILMASK
	MOVQ n+48(FP), CX
	TESTQ CX, CX
	JZ   done

row:
	VPXORD Z15, Z15, Z15
	MOVQ R10, DX
	MOVQ R12, BX
	PREFETCHT0 512(R8)
	PREFETCHT0 512(R9)

group:
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	MOVQ R13, AX

blk:
	PREFETCHT0 4096(SI)
	VPMOVZXBD (SI), Z0
	VCVTDQ2PS Z0, Z0
	VFMADD231PS (DX), Z0, Z4
	VPMOVZXBD 16(SI), Z1
	VCVTDQ2PS Z1, Z1
	VFMADD231PS 64(DX), Z1, Z5
	ADDQ $32, SI
	ADDQ $128, DX
	DECQ AX
	JNZ  blk
	VADDPS Z5, Z4, Z4
	VBROADCASTSS (R8), Z1
	VFMADD231PS Z4, Z1, Z15
	ADDQ $4, R8
	DECQ BX
	JNZ  group

	AFFINE_TAIL512
	DECQ CX
	JNZ  row

done:
	VZEROUPPER
	RET

// func gemm6x32z(a *[6]*float32, b *float32, ldb, k int, c *float32)
// c[32i+j] = Σ_{p<k} a[i][p]·b[p·ldb/4+j] for i < 6, j < 32 (ldb in bytes).
TEXT ·gemm6x32z(SB), NOSPLIT, $0-40
	GEMM_ARGS512
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11

loop2:
	CMPQ CX, $2
	JLT  tail
	Z32STEP(0, (SI), 64(SI))
	Z32STEP(4, (SI)(DX*1), 64(SI)(DX*1))
	ADDQ $8, BX
	LEAQ (SI)(DX*2), SI
	SUBQ $2, CX
	JMP  loop2

tail:
	TESTQ CX, CX
	JZ   store
	Z32STEP(0, (SI), 64(SI))

store:
	VMOVUPS Z0, 0(DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	VMOVUPS Z4, 256(DI)
	VMOVUPS Z5, 320(DI)
	VMOVUPS Z6, 384(DI)
	VMOVUPS Z7, 448(DI)
	VMOVUPS Z8, 512(DI)
	VMOVUPS Z9, 576(DI)
	VMOVUPS Z10, 640(DI)
	VMOVUPS Z11, 704(DI)
	VZEROUPPER
	RET

// func gemm6x16z(a *[6]*float32, b *float32, ldb, k int, c *float32)
// As gemm6x32z for 16 columns.
TEXT ·gemm6x16z(SB), NOSPLIT, $0-40
	GEMM_ARGS512
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5

loop4:
	CMPQ CX, $4
	JLT  loop1
	Z16STEP(0, (SI))
	Z16STEP(4, (SI)(DX*1))
	LEAQ (SI)(DX*2), SI
	Z16STEP(8, (SI))
	Z16STEP(12, (SI)(DX*1))
	LEAQ (SI)(DX*2), SI
	ADDQ $16, BX
	SUBQ $4, CX
	JMP  loop4

loop1:
	TESTQ CX, CX
	JZ   store
	Z16STEP(0, (SI))
	ADDQ $4, BX
	ADDQ DX, SI
	DECQ CX
	JMP  loop1

store:
	VMOVUPS Z0, 0(DI)
	VMOVUPS Z1, 128(DI)
	VMOVUPS Z2, 256(DI)
	VMOVUPS Z3, 384(DI)
	VMOVUPS Z4, 512(DI)
	VMOVUPS Z5, 640(DI)
	VZEROUPPER
	RET
