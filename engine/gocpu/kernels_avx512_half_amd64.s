//go:build !purego

#include "textflag.h"

// The AVX-512 4/8-bit matvecs of kernels_avx512_amd64.s for bfloat16
// scales and biases, widened exactly as they are read (declarations:
// kernels_avx512_amd64.go). Line for line the float32-scale kernels; only
// the scale and bias loads differ, so both give the same bits.

#include "kernels_amd64.h"

// func q4dot512GH(w *uint32, s, b *uint16, xp, xs, y *float32, n, groups, bpg int)
// q4dot512G with bfloat16 scales and biases.
TEXT ·q4dot512GH(SB), NOSPLIT, $0-72
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
	PREFETCHT0 4096(SI)
	Q4BLOCK512
	ADDQ $64, SI
	ADDQ $512, DX
	DECQ AX
	JNZ  blk
	SUM4Z
	BF16AT(0, X1, Z1)
	VFMADD231PS Z4, Z1, Z15
	ADDQ $2, R8
	DECQ BX
	JNZ  group

	AFFINE_TAIL512_H
	DECQ CX
	JNZ  row

done:
	VZEROUPPER
	RET

// func q4dot512SH(w *uint32, s, b *uint16, xp, xs, y *float32, n, groups, gpb, nblk int, idx *int32)
// q4dot512S with bfloat16 scales and biases: the block's gpb scales are
// loaded under mask K1 (words), widened into lanes 0..gpb-1 and spread by
// idx as there.
TEXT ·q4dot512SH(SB), NOSPLIT, $0-88
	Q4ARGS
	MOVQ nblk+72(FP), R14
	MOVQ idx+80(FP), AX
	VMOVDQU32 (AX), Z21
	MOVQ gpb+64(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1
	LEAQ 0(CX*2), R13
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
	VMOVDQU16.Z (R8), K1, X1
	VPMOVZXWD X1, Y1 // VEX: lanes 8-15 of Z1 cleared, as the masked load leaves them
	VPSLLD $16, Y1, Y1
	VPERMPS Z1, Z21, Z1
	VFMADD231PS Z4, Z1, Z15
	ADDQ R13, R8
	DECQ BX
	JNZ  blk

	AFFINE_TAIL512_H
	DECQ CX
	JNZ  row

done:
	VZEROUPPER
	RET

// func q8dot512H(w *uint32, s, b *uint16, x, xs, y *float32, n, groups, bpg int)
// q8dot512 with bfloat16 scales and biases.
TEXT ·q8dot512H(SB), NOSPLIT, $0-72
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
	BF16AT(0, X1, Z1)
	VFMADD231PS Z4, Z1, Z15
	ADDQ $2, R8
	DECQ BX
	JNZ  group

	AFFINE_TAIL512_H
	DECQ CX
	JNZ  row

done:
	VZEROUPPER
	RET
