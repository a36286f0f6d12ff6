//go:build !purego

#include "textflag.h"

// AVX2/FMA GEMM inner loops: dequantization of weight rows and the 6×16 /
// 6×8 outer-product kernels (declarations: kernels_amd64.go).

// Nibble mask for deq4.
DATA nibble<>+0(SB)/4, $0x0000000f
GLOBL nibble<>(SB), RODATA|NOPTR, $4

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
	VPBROADCASTD nibble<>+0(SB), Y15
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
	PREFETCHT0 4096(SI)
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
	PREFETCHT0 4096(SI)
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
