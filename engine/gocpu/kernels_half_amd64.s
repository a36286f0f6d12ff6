//go:build !purego

#include "textflag.h"

// AVX2/FMA/F16C loops over 2-byte floats: bfloat16 widens exactly by a
// 16-bit shift, IEEE half by VCVTPH2PS (declarations: kernels_half_amd64.go).

#define ZERO4H \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7

// HSUM4H: X0 = the sum of Y4..Y7's lanes, in dotRows' order.
#define HSUM4H \
	VADDPS Y5, Y4, Y4;        \
	VADDPS Y7, Y6, Y6;        \
	VADDPS Y6, Y4, Y4;        \
	VEXTRACTF128 $1, Y4, X0;  \
	VADDPS X4, X0, X0;        \
	VMOVHLPS X0, X0, X1;      \
	VADDPS X1, X0, X0;        \
	VMOVSHDUP X0, X1;         \
	VADDSS X1, X0, X0

// BF16 loads 8 bfloat16 at off(SI) into reg as float32.
#define BF16(off, reg) \
	VPMOVZXWD off(SI), reg; \
	VPSLLD $16, reg, reg

#define F16(off, reg) \
	VCVTPH2PS off(SI), reg

// func dotRowsBF16(w *uint16, x, y *float32, n, k int)
// y[r] = Σ_{p<k} bf16(w[r·k+p])·x[p] for n consecutive rows.
TEXT ·dotRowsBF16(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), R10
	MOVQ y+16(FP), DI
	MOVQ n+24(FP), CX
	MOVQ k+32(FP), R11
	TESTQ CX, CX
	JZ   done

row:
	ZERO4H
	MOVQ R10, DX
	MOVQ R11, AX

loop32:
	CMPQ AX, $32
	JLT  loop8
	PREFETCHT0 2048(SI)
	BF16(0, Y0)
	VFMADD231PS (DX), Y0, Y4
	BF16(16, Y1)
	VFMADD231PS 32(DX), Y1, Y5
	BF16(32, Y2)
	VFMADD231PS 64(DX), Y2, Y6
	BF16(48, Y3)
	VFMADD231PS 96(DX), Y3, Y7
	ADDQ $128, DX
	ADDQ $64, SI
	SUBQ $32, AX
	JMP  loop32

loop8:
	CMPQ AX, $8
	JLT  reduce
	BF16(0, Y0)
	VFMADD231PS (DX), Y0, Y4
	ADDQ $32, DX
	ADDQ $16, SI
	SUBQ $8, AX
	JMP  loop8

reduce:
	HSUM4H

loop1:
	TESTQ AX, AX
	JZ   store
	MOVWLZX (SI), BX
	SHLL $16, BX
	VMOVD BX, X1
	VFMADD231SS (DX), X1, X0
	ADDQ $4, DX
	ADDQ $2, SI
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

// func dotRowsF16(w *uint16, x, y *float32, n, k int)
// As dotRowsBF16 for IEEE half rows.
TEXT ·dotRowsF16(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), R10
	MOVQ y+16(FP), DI
	MOVQ n+24(FP), CX
	MOVQ k+32(FP), R11
	TESTQ CX, CX
	JZ   done

row:
	ZERO4H
	MOVQ R10, DX
	MOVQ R11, AX

loop32:
	CMPQ AX, $32
	JLT  loop8
	PREFETCHT0 2048(SI)
	F16(0, Y0)
	VFMADD231PS (DX), Y0, Y4
	F16(16, Y1)
	VFMADD231PS 32(DX), Y1, Y5
	F16(32, Y2)
	VFMADD231PS 64(DX), Y2, Y6
	F16(48, Y3)
	VFMADD231PS 96(DX), Y3, Y7
	ADDQ $128, DX
	ADDQ $64, SI
	SUBQ $32, AX
	JMP  loop32

loop8:
	CMPQ AX, $8
	JLT  reduce
	F16(0, Y0)
	VFMADD231PS (DX), Y0, Y4
	ADDQ $32, DX
	ADDQ $16, SI
	SUBQ $8, AX
	JMP  loop8

reduce:
	HSUM4H

loop1:
	TESTQ AX, AX
	JZ   store
	MOVWLZX (SI), BX
	VMOVD BX, X1
	VCVTPH2PS X1, X1
	VFMADD231SS (DX), X1, X0
	ADDQ $4, DX
	ADDQ $2, SI
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

// func widenBF16x8(dst *float32, src *uint16, n int)
// dst[i] = bf16(src[i]) for i < n, n a multiple of 8.
TEXT ·widenBF16x8(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   done

loop:
	BF16(0, Y0)
	VMOVUPS Y0, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET

// func widenF16x8(dst *float32, src *uint16, n int)
// dst[i] = f16(src[i]) for i < n, n a multiple of 8.
TEXT ·widenF16x8(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   done

loop:
	F16(0, Y0)
	VMOVUPS Y0, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET

// func sum64x16(a *uint64, n int) uint64
// Σ a[i] for i < n (n a multiple of 16), with four vector accumulators.
TEXT ·sum64x16(SB), NOSPLIT, $0-24
	MOVQ a+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $4, CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	TESTQ CX, CX
	JZ   sum

loop:
	VPADDQ (SI), Y0, Y0
	VPADDQ 32(SI), Y1, Y1
	VPADDQ 64(SI), Y2, Y2
	VPADDQ 96(SI), Y3, Y3
	ADDQ $128, SI
	DECQ CX
	JNZ  loop

sum:
	VPADDQ Y1, Y0, Y0
	VPADDQ Y3, Y2, Y2
	VPADDQ Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDQ X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VPADDQ X1, X0, X0
	VMOVQ X0, AX
	MOVQ AX, ret+16(FP)
	VZEROUPPER
	RET
